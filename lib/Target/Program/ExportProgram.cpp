//===- ExportProgram.cpp - write the rank programs of lowered IR ----------===//
//
// pipeline-translate --sched-to-program: a `sched.program` is read back
// into its plan (LoadPlan.cpp) and written by the one writer (PlanWriter.h).
// Translating serializes: the compiler proved the plan when it lowered it,
// and pipeline-run checks every program it loads; a program written or
// edited by hand is proven with `pipeline-opt --sched-verify-deadlock-free`.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "PlanWriter.h"

#include "pipesched/Dialect/Sched/SchedOps.h"

#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

LogicalResult pipesched::exportProgram(Operation *op, llvm::raw_ostream &os) {
  ProgramEncoder out = ProgramEncoder::toStream(os, program::Encoding::Json);
  return exportProgram(op, out);
}

LogicalResult pipesched::exportProgram(Operation *op, ProgramEncoder &out) {
  FailureOr<ProgramOp> program = getSingleProgram(op);
  if (failed(program))
    return failure();
  FailureOr<LoadedPlan> loaded = loadPlan(*program);
  if (failed(loaded))
    return failure();
  TensorNaming naming(*program);
  std::optional<ArrayRef<int64_t>> layers;
  if (program->getLayers())
    layers = *program->getLayers();
  ProgramHeader header = makeProgramHeader(
      program->getStages(), program->getMicrobatches(),
      program->getWorkers(), program->getStageGraphAttr(),
      program->getTiedAttr(), program->getCost(), layers,
      program->getMakespan(), program->getReplayed(), /*scanTensors=*/0);
  return writePlan({std::move(header), naming, loaded->problem, loaded->jobs,
                    loaded->plan},
                   out, *program);
}

void pipesched::registerExportProgram() {
  TranslateFromMLIRRegistration registration(
      "sched-to-program",
      "write the rank programs of a lowered step (docs/program-format.md)",
      [](Operation *op, llvm::raw_ostream &os) {
        // The message is located; printing the whole step would bury it.
        op->getContext()->printOpOnDiagnostic(false);
        return exportProgram(op, os);
      },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
