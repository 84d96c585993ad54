//===- ExplicitSchedule.h - a schedule as worker and start per job -*- C++ -*-===//
//
// Dialect-free. The schedules that no placement map expresses: the exact
// solver's and the memory-aware list scheduler's put any job on any worker.
// Both work on the same job graph of a search problem (ProblemJobs), and
// both produce an ExplicitSchedule that verifyExplicitSchedule checks:
// inputs before use (a transfer later across workers), one job at a time
// per worker, and at most `memoryLimit` live activations per worker (a
// forward holds one on its worker from its start until its backward, or its
// weight half, ends).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_EXPLICITSCHEDULE_H
#define PIPESCHED_SCHEDULING_EXPLICITSCHEDULE_H

#include "pipesched/Scheduling/Search.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// One job of a search problem, indexed by jobCoordIndex.
struct ProblemJob {
  int64_t duration = 0;
  std::vector<uint32_t> preds;
  /// The forward whose activation this job frees when it ends, or -1.
  int64_t releases = -1;
  int64_t stage = 0, microbatch = 0;
  Direction direction = Direction::Forward;
  bool forward() const { return direction == Direction::Forward; }
};

/// The jobs of `problem` by jobCoordIndex, and an order in which every job
/// follows its predecessors (microbatch by microbatch: forwards, then
/// backwards with their weight halves).
struct ProblemJobs {
  std::vector<ProblemJob> jobs;
  std::vector<uint32_t> topological;
};
ProblemJobs buildProblemJobs(const SearchProblem &problem);

/// Whether every schedule of `problem` ends well within 64-bit time: all
/// durations and a `transferTime` per job sum to at most 2^61.
bool fitsInTime(const SearchProblem &problem, int64_t transferTime);

/// Where and when every job runs, by jobCoordIndex.
struct ExplicitSchedule {
  std::vector<int32_t> worker;
  std::vector<int64_t> start;
  /// The order the jobs were started in (empty: by index): what breaks a
  /// tie of start times, where jobs of no duration start and end at once.
  std::vector<int64_t> sequence;
  int64_t makespan = 0;
  bool empty() const { return worker.empty(); }
};

/// "" or the first violation of the rules above (with `transferTime` across
/// workers and the problem's memoryLimit when positive), or a makespan that
/// is not the last end.
std::string verifyExplicitSchedule(const SearchProblem &problem,
                                   int64_t transferTime,
                                   const ExplicitSchedule &schedule);

/// Each worker's jobs in the order they start (ties: in `sequence`, else a
/// job of no duration first, then by index).
std::vector<std::vector<uint32_t>> workerOrders(const ExplicitSchedule &schedule,
                                                const ProblemJobs &graph,
                                                int64_t workers);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_EXPLICITSCHEDULE_H
