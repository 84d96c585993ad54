//===- ExplicitSchedule.cpp - a schedule as worker and start per job --------===//

#include "pipesched/Scheduling/ExplicitSchedule.h"

#include "pipesched/Scheduling/Priorities.h"

#include <algorithm>
#include <numeric>

using namespace pipesched::scheduling;

ProblemJobs pipesched::scheduling::buildProblemJobs(const SearchProblem &p) {
  ProblemJobs out;
  int64_t perPair = p.jobsPerPair(), B = p.microbatches;
  std::vector<std::vector<int64_t>> succs = p.stageSuccs();
  out.jobs.resize(size_t(p.numJobs()));
  auto id = [&](int64_t s, int64_t b, Direction d) {
    return uint32_t(jobCoordIndex(B, perPair, {s, b, d}));
  };
  auto add = [&](int64_t s, int64_t b, Direction d) -> ProblemJob & {
    ProblemJob &job = out.jobs[id(s, b, d)];
    job.duration = p.duration(s, d);
    job.stage = s;
    job.microbatch = b;
    job.direction = d;
    out.topological.push_back(id(s, b, d));
    return job;
  };
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t s = 0; s < p.stages; ++s) {
      ProblemJob &f = add(s, b, Direction::Forward);
      for (int64_t q : p.stagePreds[size_t(s)])
        f.preds.push_back(id(q, b, Direction::Forward));
    }
    for (int64_t s = p.stages; s-- > 0;) {
      // B(s) reads the gradients of its successors (its own output at a
      // last stage) and the activations its forward read.
      ProblemJob &g = add(s, b, Direction::Backward);
      if (succs[size_t(s)].empty())
        g.preds.push_back(id(s, b, Direction::Forward));
      for (int64_t t : succs[size_t(s)])
        g.preds.push_back(id(t, b, Direction::Backward));
      for (int64_t q : p.stagePreds[size_t(s)])
        g.preds.push_back(id(q, b, Direction::Forward));
      if (!p.isSplit()) {
        g.releases = id(s, b, Direction::Forward);
        continue;
      }
      ProblemJob &w = add(s, b, Direction::BackwardWeight);
      w.preds.push_back(id(s, b, Direction::Backward));
      w.releases = id(s, b, Direction::Forward);
    }
  }
  return out;
}

bool pipesched::scheduling::fitsInTime(const SearchProblem &p,
                                       int64_t transferTime) {
  __int128 total = __int128(p.numJobs()) * std::max<int64_t>(0, transferTime);
  for (int64_t s = 0; s < p.stages; ++s)
    total += __int128(p.microbatches) *
             (__int128(p.forward[size_t(s)]) + p.backward[size_t(s)] +
              p.duration(s, Direction::BackwardWeight));
  return total <= (__int128(1) << 61);
}

/// The most activations worker `w` holds at once: +1 at a forward's start,
/// -1 at its releasing job's end, releases first at equal times.
static int64_t peakLive(const ProblemJobs &graph, const ExplicitSchedule &s,
                        int32_t w) {
  std::vector<std::pair<int64_t, int>> events;
  for (size_t j = 0; j < graph.jobs.size(); ++j) {
    const ProblemJob &job = graph.jobs[j];
    if (job.forward() && s.worker[j] == w)
      events.push_back({s.start[j], +1});
    if (job.releases >= 0 && s.worker[size_t(job.releases)] == w)
      events.push_back({s.start[j] + job.duration, -1});
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (auto [time, delta] : events)
    peak = std::max(peak, live += delta);
  return peak;
}

/// "" or the first job that starts before an input (or a transfer of it).
static std::string checkInputs(const ProblemJobs &graph, int64_t transfer,
                               const ExplicitSchedule &s) {
  for (size_t j = 0; j < graph.jobs.size(); ++j)
    for (uint32_t q : graph.jobs[j].preds) {
      int64_t arrives = s.start[q] + graph.jobs[q].duration +
                        (s.worker[q] != s.worker[j] ? transfer : 0);
      if (s.start[j] < arrives)
        return "job " + std::to_string(j) + " starts at " +
               std::to_string(s.start[j]) + ", before its input from job " +
               std::to_string(q) + " arrives at " + std::to_string(arrives);
    }
  return "";
}

std::string pipesched::scheduling::verifyExplicitSchedule(
    const SearchProblem &problem, int64_t transferTime,
    const ExplicitSchedule &s) {
  ProblemJobs graph = buildProblemJobs(problem);
  size_t n = graph.jobs.size();
  if (s.worker.size() != n || s.start.size() != n ||
      (!s.sequence.empty() && s.sequence.size() != n))
    return "the schedule places " + std::to_string(s.worker.size()) +
           " jobs, the problem has " + std::to_string(n);
  int64_t makespan = 0;
  for (size_t j = 0; j < n; ++j) {
    if (s.worker[j] < 0 || s.worker[j] >= problem.workers || s.start[j] < 0)
      return "job " + std::to_string(j) + " has no worker or start";
    makespan = std::max(makespan, s.start[j] + graph.jobs[j].duration);
  }
  if (makespan != s.makespan)
    return "the makespan is " + std::to_string(makespan) + ", reported " +
           std::to_string(s.makespan);
  if (std::string error = checkInputs(graph, transferTime, s); !error.empty())
    return error;
  std::vector<std::vector<uint32_t>> orders =
      workerOrders(s, graph, problem.workers);
  for (size_t w = 0; w < orders.size(); ++w)
    for (size_t k = 1; k < orders[w].size(); ++k) {
      uint32_t before = orders[w][k - 1], job = orders[w][k];
      if (s.start[job] < s.start[before] + graph.jobs[before].duration)
        return "worker " + std::to_string(w) + " runs jobs " +
               std::to_string(before) + " and " + std::to_string(job) +
               " at once";
    }
  if (problem.memoryLimit > 0)
    for (int32_t w = 0; w < problem.workers; ++w)
      if (int64_t peak = peakLive(graph, s, w); peak > problem.memoryLimit)
        return "worker " + std::to_string(w) + " holds " +
               std::to_string(peak) + " activations, over the limit of " +
               std::to_string(problem.memoryLimit);
  return "";
}

std::vector<std::vector<uint32_t>>
pipesched::scheduling::workerOrders(const ExplicitSchedule &s,
                                    const ProblemJobs &graph, int64_t workers) {
  std::vector<std::vector<uint32_t>> orders(static_cast<size_t>(workers));
  for (size_t j = 0; j < s.worker.size(); ++j)
    orders[size_t(s.worker[j])].push_back(uint32_t(j));
  // By start; at one instant, as they were started (else a job of no
  // duration before one that starts with it).
  auto key = [&](uint32_t j) {
    int64_t tie = s.sequence.empty() ? s.start[j] + graph.jobs[j].duration
                                     : s.sequence[j];
    return std::pair(s.start[j], tie);
  };
  for (auto &list : orders)
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  return orders;
}
