//===- MemoryAwareSchedule.h - list scheduling under a memory limit -*- C++ -*-===//
//
// Dialect-free. Where a memory limit binds, the placement maps and
// priorities of the search's candidates fall short of what exists: the
// exact solver moves microbatches between workers in ways no affine map
// expresses. This is a constructive scheduler with that freedom, for steps
// far past the exact solver's reach:
//
// List scheduling. At each event, the ready jobs in priority order each take
// a free worker where their inputs have arrived (the one that holds an
// input first, then one that ran the stage before, then the lowest), a
// forward only where the worker has room for its activation. Look-ahead
// (the banker's rule, checked before every forward): the microbatches in
// flight, those with forwards left taking the free slots least need first
// and each then draining, can all finish; so the scheduler never deadlocks.
//
// Local search. The schedule's jobs in start order become the next
// priority list, and two jobs close in it are swapped or one job takes its
// least preferred worker instead (a backward away from the activation it
// frees, say); the result is kept when it is no longer (plateaus are
// crossed). From a backward-first and a forward-first rule. Deterministic
// for a given seed.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_MEMORYAWARESCHEDULE_H
#define PIPESCHED_SCHEDULING_MEMORYAWARESCHEDULE_H

#include "pipesched/Scheduling/ExplicitSchedule.h"

namespace pipesched::scheduling {

/// The list schedule of `problem` (memoryLimit <= 0: none) with
/// `transferTime` across workers, ranking ready jobs by `rank` (by
/// jobCoordIndex, smaller first). Empty when the look-ahead admits no
/// microbatch (on a chain, its S forwards need more activations than all
/// workers hold, and no schedule exists; on a stage graph, whose branches
/// may free before others start, one may exist), when `rank` does not rank
/// every job, or when the times do not fit (fitsInTime).
ExplicitSchedule listScheduleUnderMemory(const SearchProblem &problem,
                                         int64_t transferTime,
                                         const std::vector<int64_t> &rank);

struct LocalSearchOptions {
  /// List schedules tried in all (at least the two starting rules).
  int64_t iterations = 400;
  uint64_t seed = 1;
};

/// The best list schedule that local search over priority lists finds.
ExplicitSchedule searchUnderMemory(const SearchProblem &problem,
                                   int64_t transferTime,
                                   const LocalSearchOptions &options);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_MEMORYAWARESCHEDULE_H
