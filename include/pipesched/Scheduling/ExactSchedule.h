//===- ExactSchedule.h - the optimal schedule of a tiny step ----*- C++ -*-===//
//
// Dialect-free. Branch and bound over every schedule of a search problem's
// jobs: any job on any worker, any order, idle time allowed, each worker
// one job at a time, an input made on another worker arriving
// `transferTime` later, and at most `memoryLimit` live activations per
// worker (a forward holds one on its worker from its start until its
// backward, or its weight half, ends). Only schedules whose every job starts
// at time 0 or when some job ends or some input arrives are explored: any
// schedule can be shifted left into one of those without growing, so the
// optimum is among them. Workers that have run nothing are interchangeable,
// so only the first of them may start a job; microbatches are alike, so
// their first forwards start in microbatch order. Pruned by the critical
// path, the remaining work and, under a limit, the activation-time still
// to come over what the workers hold.
//
// Exponential: meant for a few dozen jobs, to measure how close the
// searched schedules and the lower bounds come to the true optimum.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_EXACTSCHEDULE_H
#define PIPESCHED_SCHEDULING_EXACTSCHEDULE_H

#include "pipesched/Scheduling/ExplicitSchedule.h"

namespace pipesched::scheduling {

struct ExactResult {
  /// The least latency found (`upperBound` when none beat it).
  int64_t makespan = 0;
  /// Whether the search finished: then `makespan` is the optimum (or no
  /// schedule beats `upperBound`).
  bool proven = false;
  int64_t nodes = 0;
  /// The schedule of `makespan`; empty when none beat `upperBound`.
  ExplicitSchedule schedule;
};

/// The optimum of `problem` (its overlapRatio must be 1: pairs are not
/// modelled), searched below `upperBound` (a known schedule's latency), in
/// at most `nodeLimit` search nodes; not searched (nor proven) when its
/// times do not fit (fitsInTime).
ExactResult solveExactly(const SearchProblem &problem, int64_t transferTime,
                         int64_t upperBound, int64_t nodeLimit);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_EXACTSCHEDULE_H
