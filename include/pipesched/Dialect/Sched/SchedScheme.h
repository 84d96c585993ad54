//===- SchedScheme.h - placement maps and priorities of a step --*- C++ -*-===//
//
// A step's scheme is its strategy and explicit maps resolved to two affine
// maps over (s, b, d) and a priority (a key or a static order). Evaluation
// is a direct walk of the affine expression: no attribute is created per job.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H
#define PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/DeadlockCheck.h"
#include "pipesched/Scheduling/Priorities.h"

#include "mlir/IR/AffineMap.h"

#include <vector>

namespace pipesched::sched {

/// Where jobs compute and where their weights live.
struct Scheme {
  mlir::AffineMap compute;
  mlir::AffineMap weights;
};

/// Checks that `map` is a placement map: (s, b, d) -> (worker), no symbols,
/// `mod`/`floordiv`/`ceildiv` only by positive constants, and no step of
/// its evaluation past 64 bits for any job of `numStages` x
/// `numMicrobatches`.
llvm::LogicalResult
verifyPlacementMap(mlir::AffineMap map, llvm::StringRef role,
                   int64_t numStages, int64_t numMicrobatches,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Checks that `map` is a priority key: (s, b, d) or (s, b, d, p) to one or
/// more integers, no symbols, divisions only by positive constants, and
/// evaluated within 64 bits, as verifyPlacementMap.
llvm::LogicalResult
verifyPriorityKey(mlir::AffineMap map, int64_t numStages,
                  int64_t numMicrobatches,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The scheme of `step`: explicit maps win over the strategy's; without a
/// weights map, weights live where they are computed. Fails (with a
/// diagnostic on the step) when there is no compute map at all.
mlir::FailureOr<Scheme> resolveScheme(StepOp step);

/// Evaluates a verified placement map's single result at (s, b, d).
int64_t evaluatePlacement(mlir::AffineMap map, int64_t s, int64_t b,
                          Direction d);

/// A verified placement map evaluated once per (stage, direction) when it
/// does not read the microbatch, and per job otherwise. The V placements
/// are affine sums of W `floordiv` terms: evaluated per job, placing cost
/// jobs x W; through the table, stages x W.
class PlacementTable {
public:
  PlacementTable(mlir::AffineMap map, int64_t numStages);
  int64_t operator()(int64_t s, int64_t b, Direction d) const {
    if (table.empty())
      return evaluatePlacement(map, s, b, d);
    return table[size_t(s * kDirections + int64_t(d))];
  }

private:
  /// Forward, backward, backward_weight and scan.
  static constexpr int64_t kDirections = 4;
  mlir::AffineMap map;
  std::vector<int64_t> table;
};

/// A step's priority, resolved: a lexicographic key over (s, b, d, p), or
/// a static-order generator with its parameters.
struct ResolvedPriority {
  /// The named policy, when the priority is one.
  PriorityPolicy policy = PriorityPolicy::FillDrain;
  mlir::AffineMap key;
  std::optional<scheduling::StaticOrder> order;
  /// Interleaved: microbatches per round (0 = W).
  int64_t group = 0;
};

/// The priority `step` uses: its own, else its strategy's default, else
/// fill-drain; named affine policies become their keys.
ResolvedPriority resolvePriority(StepOp step);

/// The key map (dims s, b, d, p) of a named policy, or a null map for a
/// static order.
mlir::AffineMap getPolicyKey(PriorityPolicy policy, mlir::MLIRContext *ctx);

/// The generator of a static-order policy, or none for a key.
std::optional<scheduling::StaticOrder> getStaticOrder(PriorityPolicy policy);

/// Evaluates every result of a verified priority key at job (s, b, d) of a
/// step with `numStages` stages, appending them to `out`.
void evaluatePriorityKey(mlir::AffineMap key, int64_t numStages, int64_t s,
                         int64_t b, Direction d,
                         llvm::SmallVectorImpl<int64_t> &out);

/// What a transfer of a tensor of `kind` carries, in the deadlock check's
/// words.
inline scheduling::PayloadKind toPayloadKind(TensorKind kind) {
  switch (kind) {
  case TensorKind::Activation:
    return scheduling::PayloadKind::Activation;
  case TensorKind::Gradient:
    return scheduling::PayloadKind::Gradient;
  case TensorKind::Scan:
    return scheduling::PayloadKind::Scan;
  }
  llvm_unreachable("unknown tensor kind");
}

/// The dialect's names for the dialect-free directions.
inline scheduling::Direction toSchedulingDirection(Direction d) {
  switch (d) {
  case Direction::Forward:
    return scheduling::Direction::Forward;
  case Direction::Backward:
    return scheduling::Direction::Backward;
  case Direction::BackwardWeight:
    return scheduling::Direction::BackwardWeight;
  case Direction::Scan:
    return scheduling::Direction::Scan;
  }
  llvm_unreachable("unknown direction");
}
inline Direction fromSchedulingDirection(scheduling::Direction d) {
  switch (d) {
  case scheduling::Direction::Forward:
    return Direction::Forward;
  case scheduling::Direction::Backward:
    return Direction::Backward;
  case scheduling::Direction::BackwardWeight:
    return Direction::BackwardWeight;
  case scheduling::Direction::Scan:
    return Direction::Scan;
  }
  llvm_unreachable("unknown direction");
}

} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDSCHEME_H
