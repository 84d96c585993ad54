//===- embed-opt.cpp - another MLIR compiler embedding pipesched ----------===//
//
// Registers the sched dialect, pipesched's passes, and a pipeline of this
// compiler's own that runs pipesched's lowering (buildLowerPipeline) with
// options it chooses.
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  pipesched::registerPipeschedPasses();
  mlir::PassPipelineRegistration<>(
      "embed-lower",
      "This compiler's lowering: pipesched's, with weights fetched two jobs "
      "ahead",
      [](mlir::OpPassManager &pm) {
        pipesched::LowerOptions options;
        options.prefetchDepth = 2;
        pipesched::buildLowerPipeline(pm, options);
      });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "embed-opt\n", registry));
}
