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

/// The priority `n(s, b, d)` of a job under `policy` in a step of S stages,
/// B microbatches and W workers (smaller runs first):
/// - fill_drain: every forward before any backward, each in microbatch order;
/// - backward_first: a ready backward before any forward (1F1B);
/// - depth_first: the oldest microbatch first (finish what was started);
/// - breadth_first: the least advanced job first (a stage for every
///   microbatch before the next stage);
/// - interleaved: the position in Megatron-core's interleaved 1F1B sequence
///   of the job's rank (s mod W): microbatches in groups of W per chunk,
///   2(W-r-1) + (v-1)W warm-up forwards, then one forward one backward.
///   A *static* order: --sched-simulate runs each worker strictly in it.
/// Whether `policy` fixes each worker's order outright (workers wait for
/// their next job rather than run another ready one).
inline bool isStaticOrder(PriorityPolicy policy) {
  return policy == PriorityPolicy::Interleaved;
}

int64_t computePriority(PriorityPolicy policy, int64_t numStages,
                        int64_t numMicrobatches, int64_t numWorkers,
                        int64_t stage, int64_t microbatch, Direction d);

} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H
