//===- SchedScheme.h - placement maps and priorities of a step --*- C++ -*-===//
//
// A step's scheme is its strategy and explicit maps resolved to two affine
// maps over (s, b, d) and a priority policy. Evaluation is a direct walk of
// the affine expression: no attribute is created per job.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H
#define PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H

#include "mlir/IR/AffineMap.h"
#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/Priorities.h"

namespace pipesched::sched {

struct Scheme {
  mlir::AffineMap compute;
  mlir::AffineMap weights;
  PriorityPolicy priority;
};

/// Checks that `map` is a placement map: (s, b, d) -> (worker), no symbols,
/// `mod`/`floordiv`/`ceildiv` only by positive constants.
llvm::LogicalResult
verifyPlacementMap(mlir::AffineMap map, llvm::StringRef role,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The scheme of `step`: explicit maps win over the strategy's; without a
/// weights map, weights live where they are computed. Fails (with a
/// diagnostic on the step) when there is no compute map at all.
mlir::FailureOr<Scheme> resolveScheme(StepOp step);

/// Evaluates a verified placement map's single result at (s, b, d).
int64_t evaluatePlacement(mlir::AffineMap map, int64_t s, int64_t b,
                          Direction d);

/// The dialect's names for the dialect-free priorities and directions.
inline scheduling::Priority toSchedulingPriority(PriorityPolicy policy) {
  switch (policy) {
  case PriorityPolicy::FillDrain:
    return scheduling::Priority::FillDrain;
  case PriorityPolicy::BackwardFirst:
    return scheduling::Priority::BackwardFirst;
  case PriorityPolicy::DepthFirst:
    return scheduling::Priority::DepthFirst;
  case PriorityPolicy::BreadthFirst:
    return scheduling::Priority::BreadthFirst;
  case PriorityPolicy::Interleaved:
    return scheduling::Priority::Interleaved;
  }
  llvm_unreachable("unknown priority policy");
}
inline scheduling::Direction toSchedulingDirection(Direction d) {
  switch (d) {
  case Direction::Forward:
    return scheduling::Direction::Forward;
  case Direction::Backward:
    return scheduling::Direction::Backward;
  case Direction::BackwardWeight:
    return scheduling::Direction::BackwardWeight;
  }
  llvm_unreachable("unknown direction");
}

/// Whether `policy` fixes each worker's order outright (see
/// scheduling::isStaticOrder).
inline bool isStaticOrder(PriorityPolicy policy) {
  return scheduling::isStaticOrder(toSchedulingPriority(policy));
}

/// The priority `n(s, b, d)` of a job under `policy`
/// (scheduling::priorityOf, lib/Scheduling/Priorities.h).
int64_t computePriority(PriorityPolicy policy, int64_t numStages,
                        int64_t numMicrobatches, int64_t numWorkers,
                        int64_t stage, int64_t microbatch, Direction d);

} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H
