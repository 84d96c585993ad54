//===- pipeline-opt.cpp - the pipesched optimizer driver ------------------===//
//
// mlir-opt for master schedules: parses `.mlir`, runs pipesched passes and
// pipelines, prints the result.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "pipesched/InitAllDialects.h"
#include "pipesched/InitAllPasses.h"
#include "pipesched/Tools/DiagnosticDefaults.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  pipesched::registerAllPasses();
  pipesched::hideLLVMOptions();
  pipesched::sayOutputErrorsPlainly("pipeline-opt");
  pipesched::addVersionPrinter();
  std::vector<char *> args = pipesched::withDiagnosticDefaults(argc, argv);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(int(args.size()) - 1, args.data(),
                        "pipesched optimizer driver\n", registry));
}
