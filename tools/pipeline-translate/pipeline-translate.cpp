//===- pipeline-translate.cpp - schedules in and out of the sched dialect -===//
//
// mlir-translate for master schedules: imports schedules users already have
// (torch.distributed.pipelining CSV) and exports pipesched's.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "pipesched/Target/Diagram.h"
#include "pipesched/Target/Program.h"
#include "pipesched/Target/TorchCSV.h"
#include "pipesched/Tools/DiagnosticDefaults.h"

int main(int argc, char **argv) {
  pipesched::registerImportTorchCSV();
  pipesched::registerExportTorchCSV();
  pipesched::registerExportProgram();
  pipesched::diagram::registerDiagramTranslations();
  pipesched::hideLLVMOptions();
  pipesched::sayOutputErrorsPlainly("pipeline-translate");
  pipesched::addVersionPrinter();
  std::vector<char *> args = pipesched::withDiagnosticDefaults(argc, argv);
  return mlir::failed(mlir::mlirTranslateMain(
      int(args.size()) - 1, args.data(), "pipesched translation driver\n"));
}
