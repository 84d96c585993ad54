//===- Priorities.h - the priority n(s, b, d) of the master schedule -*- C++ -*-===//
//
// Dialect-free: the named priority policies as functions of (s, b, d) in a
// step of S stages, B microbatches and W workers (smaller runs first), and
// the static orders that are not priorities at all (Megatron's interleaved
// sequence). The dialect's `#sched.priority<...>` names them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_PRIORITIES_H
#define PIPESCHED_SCHEDULING_PRIORITIES_H

#include "pipesched/Scheduling/Direction.h"

#include <cstdint>

namespace pipesched::scheduling {

enum class Priority : uint8_t {
  /// Every forward before any backward, each in microbatch order (GPipe).
  FillDrain,
  /// A ready backward before any forward (1F1B).
  BackwardFirst,
  /// The oldest microbatch first (finish what was started).
  DepthFirst,
  /// The least advanced job first (a stage for every microbatch before the
  /// next stage).
  BreadthFirst,
  /// The position in Megatron-core's interleaved 1F1B sequence of the job's
  /// rank (s mod W): microbatches in groups of W per chunk,
  /// 2(W-r-1) + (v-1)W warm-up forwards, then one forward one backward.
  Interleaved,
};

/// Whether `p` fixes each worker's order outright: workers wait for their
/// next job rather than run another ready one.
constexpr bool isStaticOrder(Priority p) { return p == Priority::Interleaved; }

/// n(s, b, d) under `policy`; smaller runs first.
int64_t priorityOf(Priority policy, int64_t numStages, int64_t numMicrobatches,
                   int64_t numWorkers, int64_t stage, int64_t microbatch,
                   Direction d);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_PRIORITIES_H
