//===- SchedOps.h - sched dialect operations --------------------*- C++ -*-===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDOPS_H
#define PIPESCHED_DIALECT_SCHED_SCHEDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "pipesched/Dialect/Sched/SchedDialect.h"

namespace pipesched::sched {
/// The predecessors (successors) of stage `s` in `graph`, in edge order; the
/// chain `0 -> 1 -> ... -> numStages-1` when `graph` is null.
void stagePreds(StageGraphAttr graph, int64_t numStages, int64_t s,
                llvm::SmallVectorImpl<int64_t> &preds);
void stageSuccs(StageGraphAttr graph, int64_t numStages, int64_t s,
                llvm::SmallVectorImpl<int64_t> &succs);
} // namespace pipesched::sched

#define GET_OP_CLASSES
#include "pipesched/Dialect/Sched/SchedOps.h.inc"

namespace pipesched::sched {
/// A readable name of a job for diagnostics: `forward (s=1, b=0)`.
std::string describeJob(JobOpInterface job);

/// The single `sched.step` nested in `op` (what the translations export),
/// or a diagnostic on `op` when there is none or more than one.
mlir::FailureOr<StepOp> getSingleStep(mlir::Operation *op);

/// The steps and programs nested in `op`, in order, without walking into
/// them.
void collectStepsAndPrograms(mlir::Operation *op,
                             llvm::SmallVectorImpl<StepOp> &steps,
                             llvm::SmallVectorImpl<ProgramOp> &programs);

/// The single `sched.program` nested in `op`, or a diagnostic: on the step
/// when `op` holds an unlowered step, on `op` otherwise.
mlir::FailureOr<ProgramOp> getSingleProgram(mlir::Operation *op);

/// The shape of the step or program that encloses `op`.
struct StepShape {
  int64_t stages = 0, microbatches = 0, workers = 0;
  CostAttr cost;
};
StepShape getEnclosingShape(mlir::Operation *op);
} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDOPS_H
