//===- ZeroBubbleGreedy.h - Zero Bubble's greedy ZB-1p/ZB-2p ----*- C++ -*-===//
//
// Dialect-free. The heuristic that sail-sg/zero-bubble-pipeline-parallelism
// uses to build ZB-1p / ZB-2p orders, rewritten from its algorithm:
// `Graph.manual_order` run by `initial_solution` in
// megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py at commit
// 39f2c186a27580b7051eb51e0f651e1efd0a8170.
//
// p stages, stage s on rank s, m microbatches, split backward: F (forward,
// +1 live activation), B (input-gradient half, 0) and W (weight-gradient
// half, -1). Jobs are placed one at a time on a simulated clock: a job ends
// at max(its rank's end, its dependency's end + comm) + cost, where F of
// stage s depends on F of s-1 and B of s on B of s+1 (same microbatch); W
// halves are taken oldest first. Time a rank waits after its first forward
// is that rank's bubble; the greedy compares it with the largest bubble so
// far to decide whether an idle gap is worth filling with a W.
//
//  1. Microbatch 0: one F per stage. Walking from the last stage back,
//     stage s counts the extra F's it can run, within the memory limit,
//     before B_0 arrives from stage s+1 (the arrival time is carried
//     backwards); the counts are trimmed so that each stage warms up
//     strictly less than the one before it, placed, and B_0 runs from the
//     last stage to the first.
//  2. Microbatch i = 1..m-1, forwards: each stage with F's left wants one;
//     with `prioritizeB`, a stage two or more F's ahead of its successor
//     skips it when the F (plus the W's needed to make room for it) would
//     not finish before the successor's next F + B + comm, and the gap is
//     within its bubble slack. A stage forwards only if its successor does.
//     Before each F: W's until the F fits in memory, then W's that finish
//     before F's input arrives, then one more W that overhangs the arrival
//     when the gap exceeds the bubble slack (or always, with
//     `noBubbleGreedy`).
//  3. Microbatch i, input halves, from the last stage to the first: the
//     same W filling against B_i's arrival from stage s+1; stage 0 runs all
//     its pending W's before each B once its forwards are done. Then B_i.
//  4. The remaining W's.
//
// All eight combinations of (allowBubbleBeforeFirstB, prioritizeB,
// noBubbleGreedy) are run, in the repository's order (true before false,
// nested in that order); the result is the first with the smallest longest
// per-rank span (end of the last W minus start of the first F).
//
// Complexity: O(p * m) time and memory per combination; every loop advances
// a count bounded by m, so there are exactly 3pm placements per run.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_ZEROBUBBLEGREEDY_H
#define PIPESCHED_SCHEDULING_ZEROBUBBLEGREEDY_H

#include "pipesched/Scheduling/Priorities.h"

#include <cstdint>

namespace pipesched::scheduling {

/// Durations of one stage's jobs (every stage alike) and of a transfer
/// between neighbouring stages, in any common unit. The repository's
/// runtime builds its first order, before it has profiled, with 1000, 1000,
/// 1000 and comm 1 (the orders differ from unit costs, e.g. ZB-2p at p = 2
/// or 3 once m >= 2p).
struct ZeroBubbleCosts {
  int64_t forward = 1, input = 1, weight = 1, comm = 0;
  /// Memory: a forward takes `activation`; the input half frees
  /// `activation - kept` and the weight half `kept` (the paper's M_B and
  /// M_W, the repository's mem_f, mem_b and mem_w). The defaults free all
  /// of it at the weight half.
  int64_t activation = 1, kept = 1;
};

/// The Zero Bubble repository's greedy schedule (zb.py) for p stages, one
/// per rank, and m microbatches, with at most `memoryLimit` activations
/// live per rank (F +1, B and W their parts of -1): memoryLimit = p gives
/// ZB-1p (ZB-H1's memory), 2p gives ZB-2p (ZB-H2). Stage s is on rank s. Returns each
/// rank's order of Forward, Backward (input half) and BackwardWeight jobs.
///
/// Guards: memoryLimit is clamped to [1, m] (below 1 the repository raises
/// "Cannot fit memory"; a rank never holds more than m, so a larger limit
/// changes nothing); costs and comm are clamped to [0, 2^32] so that times
/// cannot overflow. Returns an empty order when p < 1, m < 1 or
/// p * m > 2^24.
///
/// The order is the order of placement. The repository sorts each rank's
/// jobs by their simulated end times instead, which is the same order when
/// every cost is positive; with a zero cost, jobs that end together would
/// be reordered (forwards first), possibly past the memory limit.
WorkerOrders zeroBubbleGreedy(int64_t p, int64_t m, int64_t memoryLimit,
                              const ZeroBubbleCosts &costs = {});

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_ZEROBUBBLEGREEDY_H
