//===- Priorities.h - the priority n(s, b, d) of the master schedule -*- C++ -*-===//
//
// Dialect-free. A priority is either
//  - a lexicographic key per job (the dialect evaluates affine maps over
//    (s, b, d, p) into rows of integers; `rankKeys` turns them into the
//    single integer the list scheduler compares), or
//  - a static order: a generator that writes each worker's whole sequence
//    (Megatron's and torch's interleaved 1F1B, torch's looped BFS, the zero
//    bubble schedules). These are not priorities among ready jobs: a worker
//    waits for its next job. The generators follow the references' own
//    code; docs/strategies.md cites the commits.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_PRIORITIES_H
#define PIPESCHED_SCHEDULING_PRIORITIES_H

#include "pipesched/Scheduling/Direction.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// How far along its microbatch's forward-backward sweep job (s, d) is, in
/// [0, 3S): forwards 0..S-1, backwards S..2S-1 (the last stage first),
/// weight-gradient halves 2S..3S-1. The fourth dimension `p` of a priority
/// key.
int64_t sweepPosition(int64_t numStages, int64_t stage, Direction d);

/// Dense ranks of lexicographic keys: `keys` holds one row of `width`
/// integers per job; row i's rank is the number of distinct rows smaller
/// than it (equal rows share a rank). O(n log n).
std::vector<int64_t> rankKeys(const std::vector<int64_t> &keys, size_t width);

/// A job named by its coordinates.
struct JobCoord {
  int64_t stage = 0, microbatch = 0;
  Direction direction = Direction::Forward;
  /// A forward fused with the backward after it (DualPipe's F&B pair).
  bool overlapped = false;
  /// A backward whose weight half follows at once, as one backward.
  bool whole = false;
  bool operator==(const JobCoord &o) const {
    return stage == o.stage && microbatch == o.microbatch &&
           direction == o.direction;
  }
};

/// The static-order generators.
enum class StaticOrder : uint8_t {
  /// Interleaved 1F1B (Megatron-core, torch `Interleaved1F1B`): stage s on
  /// rank s mod W; microbatches in rounds of `group` per chunk, rank r runs
  /// 2(W-r-1) + (v-1)*group warm-up forwards, then one forward one
  /// backward, then drains.
  Interleaved,
  /// torch `ScheduleLoopedBFS`: stage s on rank s mod W; every forward of
  /// a rank's lower stage before its next stage, then the backwards, the
  /// highest stage first, microbatches in reverse order.
  LoopedBFS,
  /// torch `ScheduleInterleavedZeroBubble`: interleaved 1F1B with one
  /// warm-up forward per later rank (not two) and the weight-gradient
  /// halves deferred by r steps on rank r. With one stage per rank this is
  /// ZB-H1 (Qi et al., ICLR 2024): 1F1B's memory, bubble
  /// (p-1)(F + B - W) with B the input half.
  ZeroBubbleH1,
  /// torch `ScheduleZBVZeroBubble` (ZB-V): 2W stages in a V, rank r holds
  /// stages r and 2W-1-r; needs a split backward.
  ZeroBubbleV,
  /// DualPipeV (deepseek-ai/DualPipe, torch `ScheduleDualPipeV`): the V
  /// placement of ZeroBubbleV; in the steady state each forward of one
  /// stage is overlapped with a whole backward of the other; needs a split
  /// backward and B >= 2W.
  DualPipeV,
  /// ZB-H2 as the Zero Bubble repository builds it (ZB-2p): its greedy
  /// scheduler (ZeroBubbleGreedy.h) with at most 2W live activations per
  /// rank, one stage per rank, the step's costs; needs a split backward.
  ZeroBubbleH2,
  /// The controllable-memory V schedules (Qi et al., NeurIPS 2024) as the
  /// Zero Bubble repository builds them (VShapeGreedy.h): the V placement,
  /// about a third (VMin) or half (VHalf) of 1F1B's activation memory.
  VMin,
  VHalf,
};

/// The worker of stage `s` in the V placement of 2W stages: r holds stages
/// r and 2W-1-r.
inline int64_t vStageWorker(int64_t numWorkers, int64_t s) {
  return s < numWorkers ? s : 2 * numWorkers - 1 - s;
}

/// What a generator needs to know about the step.
struct OrderShape {
  int64_t stages = 1, microbatches = 1, workers = 1;
  /// Whether the backward is split into input (Backward) and weight
  /// (BackwardWeight) halves.
  bool splitBackward = false;
  /// Interleaved: microbatches per round (Megatron's microbatch group size
  /// per virtual stage); 0 means W.
  int64_t group = 0;
  /// Durations of a forward, an input half and a weight half (greedy
  /// orders depend on them).
  int64_t forwardCost = 1, inputCost = 1, weightCost = 1;
  /// A transfer between neighbouring stages (the cost's `transfer`): the
  /// Zero Bubble greedy times its placements with it.
  int64_t commCost = 0;
  /// Memory of an activation and the part of it the weight half keeps (the
  /// cost's `act` and `act_w`): the Zero Bubble greedy's memory limit
  /// counts the parts. Equal: the weight half frees it all.
  int64_t activationBytes = 1, keptBytes = 1;
};

/// Each worker's jobs, first to last.
using WorkerOrders = std::vector<std::vector<JobCoord>>;

/// Why `order` cannot be generated for `shape`, or "" when it can.
std::string checkStaticOrder(StaticOrder order, const OrderShape &shape);

/// The generator's sequence for every worker (`checkStaticOrder` first).
WorkerOrders generateStaticOrder(StaticOrder order, const OrderShape &shape);

/// Checks a generated order: every job of the shape exactly once, no
/// unknown job, each worker's forward of (s, b) before its backward.
/// Returns "" or the first violation.
std::string verifyStaticOrder(const OrderShape &shape,
                              const WorkerOrders &orders);

/// Dense index of job (s, b, d) among the S * B * perPair jobs of a shape.
inline int64_t jobCoordIndex(int64_t numMicrobatches, int64_t perPair,
                             const JobCoord &job) {
  return (job.stage * numMicrobatches + job.microbatch) * perPair +
         static_cast<int64_t>(job.direction);
}

/// The position of every job (by `jobCoordIndex`) in its generator
/// worker's sequence: what a worker sorts its own jobs by, so that a
/// placement equal to the generator's replays it exactly.
std::vector<int64_t> staticPositions(const OrderShape &shape,
                                     const WorkerOrders &orders);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_PRIORITIES_H
