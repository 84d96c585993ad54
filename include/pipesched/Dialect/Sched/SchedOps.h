//===- SchedOps.h - sched dialect operations --------------------*- C++ -*-===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDOPS_H
#define PIPESCHED_DIALECT_SCHED_SCHEDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "pipesched/Dialect/Sched/SchedDialect.h"

#define GET_OP_CLASSES
#include "pipesched/Dialect/Sched/SchedOps.h.inc"

namespace pipesched::sched {
/// A readable name of a job for diagnostics: `forward (s=1, b=0)`.
std::string describeJob(JobOpInterface job);

/// The single `sched.step` nested in `op` (what the translations export),
/// or a diagnostic on `op` when there is none or more than one.
mlir::FailureOr<StepOp> getSingleStep(mlir::Operation *op);
} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDOPS_H
