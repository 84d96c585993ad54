//===- ExactSchedule.cpp - the optimal schedule of a tiny step --------------===//

#include "pipesched/Scheduling/ExactSchedule.h"

#include "pipesched/Scheduling/Priorities.h"

#include <algorithm>
#include <limits>

using namespace pipesched::scheduling;

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

class ExactSearch {
public:
  ExactSearch(const SearchProblem &p, int64_t transfer, int64_t upperBound,
              int64_t nodeLimit)
      : transfer(transfer), best(upperBound), nodeLimit(nodeLimit),
        memoryLimit(p.memoryLimit),
        // n jobs use at most n workers, and unused ones are interchangeable.
        workers(std::min(p.workers, std::max<int64_t>(1, p.numJobs()))) {
    build(p);
  }

  ExactResult run() {
    dfs(0, 0);
    return {best, nodes <= nodeLimit, nodes, std::move(bestSchedule)};
  }

private:
  std::vector<ProblemJob> jobs;
  std::vector<uint32_t> topological;
  /// Per job: the longest path from its start to the end of the step.
  std::vector<int64_t> tail;
  /// Per forward: the least time its activation lives (the longest path
  /// from its start to its releasing job's end).
  std::vector<int64_t> life;
  int64_t perPair = 2;
  int64_t transfer, best, nodeLimit, memoryLimit, workers;
  int64_t nodes = 0;
  ExplicitSchedule bestSchedule;
  // State, undone on backtrack.
  std::vector<int64_t> start, end, workerOf;
  /// The order jobs were started in (ties of start time).
  std::vector<int64_t> order;
  std::vector<int64_t> workerFree;
  std::vector<uint8_t> touched;
  size_t started = 0;

  void build(const SearchProblem &p) {
    ProblemJobs graph = buildProblemJobs(p);
    perPair = p.jobsPerPair();
    jobs = std::move(graph.jobs);
    topological = std::move(graph.topological);
    // Tails, from the sinks back (reverse topological order).
    tail.assign(jobs.size(), 0);
    for (size_t k = topological.size(); k-- > 0;) {
      uint32_t j = topological[k];
      tail[j] += jobs[j].duration;
      for (uint32_t q : jobs[j].preds)
        tail[q] = std::max(tail[q], tail[j]);
    }
    computeLifetimes();
    size_t n = jobs.size();
    start.assign(n, kNever);
    end.assign(n, kNever);
    workerOf.assign(n, -1);
    order.assign(n, 0);
    workerFree.assign(size_t(workers), 0);
    touched.assign(size_t(workers), 0);
  }

  /// Longest paths from each forward to its release (a few dozen jobs:
  /// one pass over the topological order per forward).
  void computeLifetimes() {
    life.assign(jobs.size(), 0);
    std::vector<int64_t> from(jobs.size());
    for (size_t f = 0; f < jobs.size(); ++f) {
      if (!jobs[f].forward())
        continue;
      std::fill(from.begin(), from.end(), -1);
      from[f] = 0;
      for (uint32_t j : topological) {
        for (uint32_t q : jobs[j].preds)
          if (from[q] >= 0)
            from[j] = std::max(from[j], from[q] + jobs[q].duration);
        if (jobs[j].releases == int64_t(f) && from[j] >= 0)
          life[f] = from[j] + jobs[j].duration;
      }
    }
  }

  bool isStarted(size_t j) const { return start[j] != kNever; }

  /// Microbatches are alike: the first forwards start in microbatch order
  /// (by time, then worker), which any schedule meets once relabelled.
  bool startsOutOfTurn(size_t j) const {
    const ProblemJob &job = jobs[j];
    return job.forward() && job.stage == 0 && job.microbatch > 0 &&
           !isStarted(j - size_t(perPair));
  }

  /// Under a limit, the activation-time still to come over what the
  /// workers can hold: each live activation until its release can end,
  /// each unstarted forward's for its least life.
  int64_t memoryBound(int64_t t) const {
    if (memoryLimit <= 0)
      return 0;
    __int128 pending = 0;
    for (size_t f = 0; f < jobs.size(); ++f) {
      if (!jobs[f].forward())
        continue;
      if (!isStarted(f)) {
        pending += life[f];
        continue;
      }
      int64_t rest = start[f] + life[f] - t;
      pending += std::max<int64_t>(0, rest);
    }
    __int128 room = __int128(workers) * memoryLimit;
    return t + int64_t((pending + room - 1) / room);
  }

  /// When job j's inputs are all on worker w, or kNever.
  int64_t arrival(size_t j, int64_t w) const {
    int64_t at = 0;
    for (uint32_t q : jobs[j].preds) {
      if (!isStarted(q))
        return kNever;
      at = std::max(at, end[q] + (workerOf[q] != w ? transfer : 0));
    }
    return at;
  }

  int64_t liveAt(int64_t w, int64_t t) const {
    int64_t live = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!jobs[j].forward() || workerOf[j] != w || start[j] > t)
        continue;
      live += 1;
    }
    for (size_t j = 0; j < jobs.size(); ++j)
      if (jobs[j].releases >= 0 && end[j] <= t &&
          workerOf[size_t(jobs[j].releases)] == w)
        live -= 1;
    return live;
  }

  /// A bound on the makespan of any completion of the current state.
  int64_t lowerBound(int64_t t) const {
    int64_t bound = 0;
    __int128 pending = 0;
    std::vector<int64_t> earliest(jobs.size(), 0);
    for (uint32_t j : topological) {
      if (isStarted(j)) {
        bound = std::max(bound, end[j]);
        continue;
      }
      int64_t at = t;
      for (uint32_t q : jobs[j].preds)
        at = std::max(at, isStarted(q) ? end[q]
                                       : earliest[q] + jobs[q].duration);
      earliest[j] = at;
      bound = std::max(bound, at + tail[j]);
      pending += jobs[j].duration;
    }
    for (int64_t w = 0; w < workers; ++w)
      pending += std::max<int64_t>(0, workerFree[size_t(w)] - t);
    int64_t spread = int64_t((pending + workers - 1) / workers);
    return std::max({bound, t + spread, memoryBound(t)});
  }

  void dfs(int64_t t, int64_t fromWorker) {
    if (++nodes > nodeLimit)
      return;
    if (started == jobs.size()) {
      int64_t makespan = 0;
      for (int64_t e : end)
        makespan = std::max(makespan, e);
      if (makespan < best) {
        best = makespan;
        bestSchedule.worker.assign(workerOf.begin(), workerOf.end());
        bestSchedule.start = start;
        bestSchedule.sequence = order;
        bestSchedule.makespan = makespan;
      }
      return;
    }
    if (lowerBound(t) >= best)
      return;
    int64_t w = fromWorker;
    while (w < workers && workerFree[size_t(w)] > t)
      ++w;
    if (w == workers) {
      // Every worker is busy or has passed: on to the next event.
      int64_t next = kNever;
      for (int64_t free : workerFree)
        if (free > t)
          next = std::min(next, free);
      for (size_t j = 0; j < jobs.size(); ++j) {
        if (isStarted(j))
          continue;
        for (int64_t v = 0; v < workers; ++v) {
          int64_t at = arrival(j, v);
          if (at > t && at != kNever)
            next = std::min(next, at);
        }
      }
      if (next != kNever)
        dfs(next, 0);
      return;
    }
    // Workers that have run nothing are interchangeable: only the first
    // of them may start a job.
    bool firstFresh = true;
    if (!touched[size_t(w)])
      for (int64_t v = 0; v < w; ++v)
        firstFresh &= bool(touched[size_t(v)]);
    if (firstFresh) {
      int64_t live = -1;
      for (size_t j = 0; j < jobs.size() && nodes <= nodeLimit; ++j) {
        if (isStarted(j) || startsOutOfTurn(j) || arrival(j, w) > t)
          continue;
        if (jobs[j].forward() && memoryLimit > 0) {
          if (live < 0)
            live = liveAt(w, t);
          if (live + 1 > memoryLimit)
            continue;
        }
        int64_t savedFree = workerFree[size_t(w)];
        uint8_t savedTouched = touched[size_t(w)];
        start[j] = t;
        end[j] = t + jobs[j].duration;
        workerOf[j] = w;
        workerFree[size_t(w)] = end[j];
        touched[size_t(w)] = 1;
        order[j] = int64_t(started++);
        // A job of no duration may ready work for a worker already passed.
        dfs(t, jobs[j].duration == 0 ? 0 : w);
        --started;
        start[j] = end[j] = kNever;
        workerOf[j] = -1;
        workerFree[size_t(w)] = savedFree;
        touched[size_t(w)] = savedTouched;
      }
    }
    // Or worker w starts nothing now.
    dfs(t, w + 1);
  }
};
} // namespace

ExactResult pipesched::scheduling::solveExactly(const SearchProblem &problem,
                                                int64_t transferTime,
                                                int64_t upperBound,
                                                int64_t nodeLimit) {
  if (!fitsInTime(problem, transferTime))
    return {upperBound, false, 0, {}};
  return ExactSearch(problem, transferTime, upperBound, nodeLimit).run();
}
