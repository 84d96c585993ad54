//===- ListScheduler.cpp - event-driven multi-worker list scheduling ------===//
//
// The simulation keeps a global min-heap of events (job completions and
// arrivals of jobs whose inputs are still in transfer) and processes time in
// rounds: all events at time t first, then every worker whose state changed
// at t tries to start a job. A job of duration 0 started at t completes in a
// later round at the same t, so its successors may still start at t.
//
// Ready jobs of a worker are bucketed by their acquire amount; a segment tree
// over the buckets' best jobs finds the best job whose acquire fits the
// worker's free memory in O(log K) for K distinct amounts on that worker. This
// implements the header's rule exactly: a job blocked by the cap never blocks
// a worse job that fits (with equal amounts, as in a pipeline, the blocked
// forward blocks every later forward, so forwards keep their order).
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Scheduling/Saturating.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace pipesched::scheduling {

uint32_t JobGraph::addJob(const Job &job,
                          const std::vector<uint32_t> &jobPreds) {
  if (predBegin.empty())
    predBegin.push_back(0);
  auto index = static_cast<uint32_t>(jobs.size());
  jobs.push_back(job);
  preds.insert(preds.end(), jobPreds.begin(), jobPreds.end());
  predBegin.push_back(static_cast<uint32_t>(preds.size()));
  return index;
}

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// Dispatch order of ready jobs: smaller (priority, index) first.
using Key = std::pair<int64_t, uint32_t>;
constexpr Key kNoKey{kInt64Max, std::numeric_limits<uint32_t>::max()};

std::string jobName(uint32_t job) { return "job " + std::to_string(job); }
std::string workerName(int64_t worker) {
  return "worker " + std::to_string(worker);
}

SimulationResult failure(std::string message, std::vector<uint32_t> jobs = {}) {
  SimulationResult result;
  result.error = std::move(message);
  result.blockedJobs = std::move(jobs);
  return result;
}

//===----------------------------------------------------------------------===//
// Input validation
//===----------------------------------------------------------------------===//

/// Checks the CSR arrays and the predecessor indices.
std::optional<SimulationResult> validateEdges(const JobGraph &graph) {
  size_t numJobs = graph.jobs.size();
  // A default-constructed graph (no jobs, no predBegin) is the empty graph.
  if (numJobs == 0 && graph.predBegin.empty() && graph.preds.empty())
    return std::nullopt;
  if (graph.predBegin.size() != numJobs + 1)
    return failure(
        "invalid job graph: predBegin has " +
        std::to_string(graph.predBegin.size()) +
        " entries, expected jobs + 1 = " + std::to_string(numJobs + 1));
  if (graph.predBegin.front() != 0 ||
      graph.predBegin.back() != graph.preds.size())
    return failure("invalid job graph: predBegin must start at 0 and end at "
                   "preds.size() = " +
                   std::to_string(graph.preds.size()));
  // Monotone first: then every range lies inside `preds`.
  for (uint32_t j = 0; j < numJobs; ++j)
    if (graph.predBegin[j] > graph.predBegin[j + 1])
      return failure("invalid job graph: predBegin decreases at " + jobName(j),
                     {j});
  for (uint32_t j = 0; j < numJobs; ++j) {
    for (uint32_t e = graph.predBegin[j]; e < graph.predBegin[j + 1]; ++e)
      if (graph.preds[e] >= numJobs)
        return failure(
            "invalid job graph: " + jobName(j) + " has predecessor " +
                std::to_string(graph.preds[e]) + ", out of range [0, " +
                std::to_string(numJobs) + ")",
            {j});
  }
  return std::nullopt;
}

/// What is wrong with one job's own fields, or an empty string.
std::string jobFieldError(const Job &job, int32_t numWorkers, int64_t numJobs) {
  if (job.worker < 0 || job.worker >= numWorkers)
    return " has worker " + std::to_string(job.worker) + ", out of range [0, " +
           std::to_string(numWorkers) + ")";
  if (job.duration < 0)
    return " has negative duration " + std::to_string(job.duration);
  if (job.acquire < 0 || job.acquireBytes < 0)
    return " acquires a negative amount of memory";
  if (job.releases < -1 || job.releases >= numJobs)
    return " releases " + std::to_string(job.releases) +
           ", neither -1 nor a job index";
  if (job.releaseUnits < -1 || job.releaseBytes < -1)
    return " releases a negative part of a job's memory";
  return {};
}

/// What `job` frees of the memory of the job it releases.
static std::pair<int64_t, int64_t> releasedAmount(const JobGraph &graph,
                                                  const Job &job) {
  const Job &owner = graph.jobs[size_t(job.releases)];
  return {job.releaseUnits < 0 ? owner.acquire : job.releaseUnits,
          job.releaseBytes < 0 ? owner.acquireBytes : job.releaseBytes};
}

/// Checks each job's own fields and that no job's memory is released
/// twice: wholly by one job, or in parts (by several jobs) that add up to
/// at most what it acquired.
std::optional<SimulationResult> validateJobs(const JobGraph &graph) {
  auto numJobs = static_cast<int64_t>(graph.jobs.size());
  std::vector<int64_t> releasedBy(graph.jobs.size(), -1);
  std::vector<char> wholly(graph.jobs.size(), 0);
  std::vector<std::pair<int64_t, int64_t>> freed(graph.jobs.size());
  for (uint32_t j = 0; j < graph.jobs.size(); ++j) {
    const Job &job = graph.jobs[j];
    std::string problem = jobFieldError(job, graph.numWorkers, numJobs);
    if (!problem.empty())
      return failure("invalid job graph: " + jobName(j) + problem, {j});
    if (job.releases < 0)
      continue;
    size_t k = size_t(job.releases);
    bool whole = job.releaseUnits < 0 && job.releaseBytes < 0;
    int64_t &other = releasedBy[k];
    if (other >= 0 && (whole || wholly[k]))
      return failure("invalid job graph: " + jobName(j) + " and " +
                         jobName(static_cast<uint32_t>(other)) +
                         " both release the memory of " + jobName(k),
                     {static_cast<uint32_t>(other), j});
    auto [units, bytes] = releasedAmount(graph, job);
    freed[k] = {saturatingAdd(freed[k].first, units),
                saturatingAdd(freed[k].second, bytes)};
    if (freed[k].first > graph.jobs[k].acquire ||
        freed[k].second > graph.jobs[k].acquireBytes)
      return failure("invalid job graph: " + jobName(j) + " releases more of " +
                         jobName(k) + "'s memory than it acquired",
                     {j});
    other = j;
    wholly[k] = whole;
  }
  return std::nullopt;
}

/// Checks the options against the graph.
std::optional<SimulationResult> validateOptions(const JobGraph &graph,
                                                const SimulationOptions &opts) {
  if (opts.transferTime < 0 || opts.interNodeTransferTime < 0)
    return failure("invalid options: negative transferTime " +
                   std::to_string(std::min(opts.transferTime,
                                           opts.interNodeTransferTime)));
  if (!opts.nodeOf.empty() &&
      opts.nodeOf.size() != static_cast<size_t>(graph.numWorkers))
    return failure("invalid options: nodeOf has " +
                   std::to_string(opts.nodeOf.size()) +
                   " entries, expected 0 or numWorkers = " +
                   std::to_string(graph.numWorkers));
  size_t caps = opts.memoryCap.size();
  if (caps != 0 && caps != static_cast<size_t>(graph.numWorkers))
    return failure("invalid options: memoryCap has " + std::to_string(caps) +
                   " entries, expected 0 or numWorkers = " +
                   std::to_string(graph.numWorkers));
  if (caps != 0) {
    for (uint32_t j = 0; j < graph.jobs.size(); ++j) {
      const Job &job = graph.jobs[j];
      int64_t cap = opts.memoryCap[job.worker];
      if (cap >= 0 && job.acquire > cap)
        return failure("memory cap of " + workerName(job.worker) + " (" +
                           std::to_string(cap) + ") is below the acquire of " +
                           jobName(j) + " (" + std::to_string(job.acquire) +
                           "): it can never start",
                       {j});
    }
  }
  // Every gap in which no job runs ends with an arrival, so the makespan is
  // at most the sum of durations plus one transfer per job: bound it.
  int64_t total = 0;
  for (const Job &job : graph.jobs)
    if (__builtin_add_overflow(total, job.duration, &total) ||
        __builtin_add_overflow(total,
                               std::max(opts.transferTime,
                                        opts.interNodeTransferTime),
                               &total))
      return failure("invalid job graph: durations and transfer times "
                     "overflow 64-bit time");
  return std::nullopt;
}

/// Checks the explicit order: one list per worker, every job exactly once,
/// on the list of its own worker.
std::optional<SimulationResult> validateOrder(const JobGraph &graph) {
  if (graph.order.empty())
    return std::nullopt;
  if (graph.order.size() != static_cast<size_t>(graph.numWorkers))
    return failure(
        "invalid order: " + std::to_string(graph.order.size()) +
        " lists, expected numWorkers = " + std::to_string(graph.numWorkers));
  std::vector<char> seen(graph.jobs.size(), 0);
  size_t listed = 0;
  for (size_t w = 0; w < graph.order.size(); ++w) {
    auto fail = [&](const std::string &what, std::vector<uint32_t> jobs) {
      return failure("invalid order: " + workerName(w) + " lists " + what,
                     std::move(jobs));
    };
    for (uint32_t j : graph.order[w]) {
      if (j >= graph.jobs.size())
        return fail("job index " + std::to_string(j) + ", out of range", {});
      if (seen[j])
        return fail(jobName(j) + ", which is already listed", {j});
      if (static_cast<size_t>(graph.jobs[j].worker) != w)
        return fail(jobName(j) + ", which runs on " +
                        workerName(graph.jobs[j].worker),
                    {j});
      seen[j] = 1;
      ++listed;
    }
  }
  if (listed != graph.jobs.size()) {
    auto missing = static_cast<uint32_t>(
        std::find(seen.begin(), seen.end(), 0) - seen.begin());
    return failure("invalid order: " + jobName(missing) +
                       " is on no worker's list",
                   {missing});
  }
  return std::nullopt;
}

std::optional<SimulationResult> validate(const JobGraph &graph,
                                         const SimulationOptions &opts) {
  if (graph.numWorkers < 1)
    return failure("invalid job graph: numWorkers must be positive, got " +
                   std::to_string(graph.numWorkers));
  // Job indices are uint32_t; keep one value free as a sentinel.
  if (graph.jobs.size() >= std::numeric_limits<uint32_t>::max())
    return failure("invalid job graph: too many jobs");
  if (auto err = validateEdges(graph))
    return err;
  if (auto err = validateJobs(graph))
    return err;
  if (auto err = validateOptions(graph, opts))
    return err;
  return validateOrder(graph);
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

/// Successor lists in CSR form (the inverse of the predecessor lists).
struct Successors {
  std::vector<uint32_t> begin, list;

  explicit Successors(const JobGraph &graph) {
    size_t numJobs = graph.jobs.size();
    begin.assign(numJobs + 1, 0);
    for (uint32_t p : graph.preds)
      ++begin[p + 1];
    for (size_t j = 0; j < numJobs; ++j)
      begin[j + 1] += begin[j];
    list.resize(graph.preds.size());
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t j = 0; j < numJobs; ++j)
      for (uint32_t e = graph.predBegin[j]; e < graph.predBegin[j + 1]; ++e)
        list[fill[graph.preds[e]]++] = j;
  }
};

/// Kahn's algorithm; on a cycle, walks unfinished predecessors (every job
/// left over has one) until a job repeats, and reports that cycle.
std::optional<SimulationResult> findCycle(const JobGraph &graph,
                                          const Successors &succ) {
  size_t numJobs = graph.jobs.size();
  std::vector<uint32_t> indegree(numJobs);
  std::vector<uint32_t> stack;
  for (uint32_t j = 0; j < numJobs; ++j) {
    indegree[j] = graph.predBegin[j + 1] - graph.predBegin[j];
    if (indegree[j] == 0)
      stack.push_back(j);
  }
  std::vector<char> sorted(numJobs, 0);
  size_t numSorted = 0;
  while (!stack.empty()) {
    uint32_t j = stack.back();
    stack.pop_back();
    sorted[j] = 1;
    ++numSorted;
    for (uint32_t e = succ.begin[j]; e < succ.begin[j + 1]; ++e)
      if (--indegree[succ.list[e]] == 0)
        stack.push_back(succ.list[e]);
  }
  if (numSorted == numJobs)
    return std::nullopt;

  std::vector<int64_t> visitStep(numJobs, -1);
  std::vector<uint32_t> walk;
  auto current = static_cast<uint32_t>(
      std::find(sorted.begin(), sorted.end(), 0) - sorted.begin());
  while (visitStep[current] < 0) {
    visitStep[current] = static_cast<int64_t>(walk.size());
    walk.push_back(current);
    for (uint32_t e = graph.predBegin[current];
         e < graph.predBegin[current + 1]; ++e) {
      if (!sorted[graph.preds[e]]) {
        current = graph.preds[e];
        break;
      }
    }
  }
  // The walk follows predecessors; print the cycle in dependency order.
  std::vector<uint32_t> cycle(walk.begin() + visitStep[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string message = "cycle in the job graph: ";
  for (uint32_t j : cycle)
    message += jobName(j) + " -> ";
  message += jobName(cycle.front());
  return failure(std::move(message), std::move(cycle));
}

//===----------------------------------------------------------------------===//
// Ready queue of one worker
//===----------------------------------------------------------------------===//

/// Ready jobs of one worker, bucketed by acquire amount. A bottom-up segment
/// tree over the buckets (sorted by amount) holds each bucket's best key, so
/// the best job with acquire <= budget is a prefix minimum: O(log K).
class ReadyQueue {
public:
  /// `amounts`: the sorted distinct acquire amounts of the worker's jobs.
  void init(std::vector<int64_t> amounts) {
    amounts_ = std::move(amounts);
    buckets_.resize(amounts_.size());
    tree_.assign(2 * amounts_.size(), Entry{kNoKey, 0});
  }

  uint32_t bucketOf(int64_t acquire) const {
    return static_cast<uint32_t>(
        std::lower_bound(amounts_.begin(), amounts_.end(), acquire) -
        amounts_.begin());
  }

  bool empty() const { return size_ == 0; }

  void push(Key key, uint32_t bucket) {
    buckets_[bucket].push(key);
    ++size_;
    update(bucket);
  }

  /// The best job whose acquire is at most `budget`, or kNoKey.
  Key peek(int64_t budget) const { return bestPrefix(budgetEnd(budget)).key; }

  /// Removes and returns the best job whose acquire fits `budget`, if any.
  std::optional<uint32_t> pop(int64_t budget) {
    Entry best = bestPrefix(budgetEnd(budget));
    if (best.key == kNoKey)
      return std::nullopt;
    buckets_[best.bucket].pop();
    --size_;
    update(best.bucket);
    return best.key.second;
  }

private:
  struct Entry {
    Key key;
    uint32_t bucket;
    bool operator<(const Entry &other) const { return key < other.key; }
  };
  using MinHeap = std::priority_queue<Key, std::vector<Key>, std::greater<>>;

  /// Number of buckets whose amount fits in `budget`.
  size_t budgetEnd(int64_t budget) const {
    return std::upper_bound(amounts_.begin(), amounts_.end(), budget) -
           amounts_.begin();
  }

  void update(uint32_t bucket) {
    size_t n = amounts_.size();
    const MinHeap &heap = buckets_[bucket];
    tree_[n + bucket] = Entry{heap.empty() ? kNoKey : heap.top(), bucket};
    for (size_t node = (n + bucket) / 2; node >= 1; node /= 2)
      tree_[node] = std::min(tree_[2 * node], tree_[2 * node + 1]);
  }

  /// Minimum over buckets [0, end); valid for any n since min commutes.
  Entry bestPrefix(size_t end) const {
    Entry best{kNoKey, 0};
    size_t n = amounts_.size();
    for (size_t lo = n, hi = n + end; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1)
        best = std::min(best, tree_[lo++]);
      if (hi & 1)
        best = std::min(best, tree_[--hi]);
    }
    return best;
  }

  std::vector<int64_t> amounts_;
  std::vector<MinHeap> buckets_;
  std::vector<Entry> tree_;
  size_t size_ = 0;
};

//===----------------------------------------------------------------------===//
// The simulation
//===----------------------------------------------------------------------===//

struct Event {
  int64_t time;
  uint32_t job;
  bool arrival; ///< inputs of `job` arrived; otherwise `job` completed
};
struct EventLater {
  bool operator()(const Event &a, const Event &b) const {
    return std::tie(a.time, a.job, a.arrival) >
           std::tie(b.time, b.job, b.arrival);
  }
};

class Simulator {
public:
  Simulator(const JobGraph &graph, const SimulationOptions &opts,
            const Successors &succ)
      : graph_(graph), opts_(opts), succ_(succ),
        orderMode_(!graph.order.empty()), numJobs_(graph.jobs.size()),
        numWorkers_(graph.numWorkers) {}

  SimulationResult run();

private:
  void init();
  void seedRoots();
  void handle(const Event &event);
  void finishJob(uint32_t job, int64_t now);
  void makeDispatchable(uint32_t job);
  void markDirty(int32_t worker);
  void dispatchDirty(int64_t now);
  std::optional<uint32_t> pickJob(int32_t worker);
  void startJob(uint32_t job, int64_t now);
  int64_t budget(int32_t worker) const;
  SimulationResult deadlock() const;
  std::string describeWait(int32_t worker, uint32_t job) const;
  Timeline timeline() const;

  const JobGraph &graph_;
  const SimulationOptions &opts_;
  const Successors &succ_;
  const bool orderMode_;
  const size_t numJobs_;
  const int32_t numWorkers_;

  // Per job.
  std::vector<uint32_t> unfinishedPreds_;
  std::vector<int64_t> readyAt_; ///< latest arrival of a finished pred
  std::vector<int64_t> start_, end_, position_; ///< start_ -1: not started
  std::vector<char> finished_;
  std::vector<char> dispatchable_; ///< explicit order: ready to start
  std::vector<uint32_t> bucket_;   ///< priority mode: ready-queue bucket

  // Per worker.
  std::vector<int64_t> running_; ///< job index or -1
  std::vector<ReadyQueue> ready_;
  std::vector<size_t> unfinished_;
  std::vector<std::vector<uint32_t>> workerOrder_;
  std::vector<int64_t> live_, liveBytes_, peakLive_, peakLiveBytes_;
  std::vector<int32_t> dirty_;
  std::vector<char> isDirty_;

  std::priority_queue<Event, std::vector<Event>, EventLater> events_;
  std::optional<SimulationResult> error_;
};

void Simulator::init() {
  size_t w = numWorkers_;
  unfinishedPreds_.resize(numJobs_);
  readyAt_.assign(numJobs_, 0);
  start_.assign(numJobs_, -1);
  end_.assign(numJobs_, -1);
  position_.assign(numJobs_, -1);
  finished_.assign(numJobs_, 0);
  running_.assign(w, -1);
  unfinished_.assign(w, 0);
  workerOrder_.resize(w);
  live_.assign(w, 0);
  liveBytes_.assign(w, 0);
  peakLive_.assign(w, 0);
  peakLiveBytes_.assign(w, 0);
  isDirty_.assign(w, 0);
  for (uint32_t j = 0; j < numJobs_; ++j) {
    unfinishedPreds_[j] = graph_.predBegin[j + 1] - graph_.predBegin[j];
    ++unfinished_[graph_.jobs[j].worker];
  }
  for (size_t k = 0; k < w; ++k)
    workerOrder_[k].reserve(unfinished_[k]);
  if (orderMode_) {
    dispatchable_.assign(numJobs_, 0);
    return;
  }
  // Bucket the jobs of each worker by their distinct acquire amounts.
  std::vector<std::vector<int64_t>> amounts(w);
  for (const Job &job : graph_.jobs)
    amounts[job.worker].push_back(job.acquire);
  ready_.resize(w);
  for (size_t k = 0; k < w; ++k) {
    std::sort(amounts[k].begin(), amounts[k].end());
    amounts[k].erase(std::unique(amounts[k].begin(), amounts[k].end()),
                     amounts[k].end());
    ready_[k].init(std::move(amounts[k]));
  }
  bucket_.resize(numJobs_);
  for (uint32_t j = 0; j < numJobs_; ++j)
    bucket_[j] = ready_[graph_.jobs[j].worker].bucketOf(graph_.jobs[j].acquire);
}

void Simulator::seedRoots() {
  for (uint32_t j = 0; j < numJobs_; ++j)
    if (unfinishedPreds_[j] == 0)
      makeDispatchable(j);
}

void Simulator::markDirty(int32_t worker) {
  if (isDirty_[worker])
    return;
  isDirty_[worker] = 1;
  dirty_.push_back(worker);
}

/// The job's inputs are all on its worker: let the worker consider it.
void Simulator::makeDispatchable(uint32_t job) {
  int32_t worker = graph_.jobs[job].worker;
  if (orderMode_)
    dispatchable_[job] = 1;
  else
    ready_[worker].push(Key{graph_.jobs[job].priority, job}, bucket_[job]);
  markDirty(worker);
}

void Simulator::handle(const Event &event) {
  if (event.arrival)
    makeDispatchable(event.job);
  else
    finishJob(event.job, event.time);
}

void Simulator::finishJob(uint32_t job, int64_t now) {
  const Job &info = graph_.jobs[job];
  finished_[job] = 1;
  running_[info.worker] = -1;
  --unfinished_[info.worker];
  markDirty(info.worker);

  if (info.releases >= 0) {
    auto freed = static_cast<uint32_t>(info.releases);
    if (start_[freed] < 0) {
      error_ = failure(jobName(job) + " releases the memory of " +
                           jobName(freed) + ", which has not started",
                       {job, freed});
      return;
    }
    const Job &owner = graph_.jobs[freed];
    auto [units, bytes] = releasedAmount(graph_, info);
    live_[owner.worker] = saturatingAdd(live_[owner.worker], -units);
    liveBytes_[owner.worker] = saturatingAdd(liveBytes_[owner.worker], -bytes);
    markDirty(owner.worker); // a capped worker may now fit its next job
  }

  for (uint32_t e = succ_.begin[job]; e < succ_.begin[job + 1]; ++e) {
    uint32_t next = succ_.list[e];
    readyAt_[next] = std::max(
        readyAt_[next],
        now + opts_.transferBetween(info.worker, graph_.jobs[next].worker));
    if (--unfinishedPreds_[next] != 0)
      continue;
    if (readyAt_[next] <= now)
      makeDispatchable(next);
    else
      events_.push(Event{readyAt_[next], next, /*arrival=*/true});
  }
}

int64_t Simulator::budget(int32_t worker) const {
  if (opts_.memoryCap.empty() || opts_.memoryCap[worker] < 0)
    return kInt64Max;
  return opts_.memoryCap[worker] - live_[worker];
}

std::optional<uint32_t> Simulator::pickJob(int32_t worker) {
  if (!orderMode_)
    return ready_[worker].pop(budget(worker));
  size_t next = workerOrder_[worker].size();
  const std::vector<uint32_t> &list = graph_.order[worker];
  // The listed job waits for its inputs, and for room under the cap.
  if (next < list.size() && dispatchable_[list[next]] &&
      graph_.jobs[list[next]].acquire <= budget(worker))
    return list[next];
  return std::nullopt;
}

void Simulator::startJob(uint32_t job, int64_t now) {
  const Job &info = graph_.jobs[job];
  int32_t worker = info.worker;
  running_[worker] = job;
  start_[job] = now;
  end_[job] = now + info.duration;
  position_[job] = static_cast<int64_t>(workerOrder_[worker].size());
  workerOrder_[worker].push_back(job);
  if (info.acquire > 0 || info.acquireBytes > 0) {
    live_[worker] = saturatingAdd(live_[worker], info.acquire);
    liveBytes_[worker] = saturatingAdd(liveBytes_[worker], info.acquireBytes);
    peakLive_[worker] = std::max(peakLive_[worker], live_[worker]);
    peakLiveBytes_[worker] =
        std::max(peakLiveBytes_[worker], liveBytes_[worker]);
  }
  events_.push(Event{end_[job], job, /*arrival=*/false});
}

/// Every worker whose state changed at `now` starts a job if it can; workers
/// are independent at a fixed time, so their order does not matter.
void Simulator::dispatchDirty(int64_t now) {
  for (int32_t worker : dirty_) {
    isDirty_[worker] = 0;
    if (running_[worker] >= 0)
      continue;
    if (std::optional<uint32_t> job = pickJob(worker))
      startJob(*job, now);
  }
  dirty_.clear();
}

SimulationResult Simulator::run() {
  init();
  seedRoots();
  dispatchDirty(0);
  while (!events_.empty()) {
    int64_t now = events_.top().time;
    // All events at `now` (completions release memory and make successors
    // ready) come before any dispatch at `now`.
    while (!events_.empty() && events_.top().time == now) {
      Event event = events_.top();
      events_.pop();
      handle(event);
      if (error_)
        return std::move(*error_);
    }
    dispatchDirty(now);
  }
  for (size_t count : unfinished_)
    if (count != 0)
      return deadlock();
  SimulationResult result;
  result.timeline = timeline();
  return result;
}

/// Why `job` (the job `worker` waits on) cannot start. Only called once no
/// event is pending, so nothing runs and no input is in transfer.
std::string Simulator::describeWait(int32_t worker, uint32_t job) const {
  std::string text = workerName(worker) + " waits for " + jobName(job);
  for (uint32_t e = graph_.predBegin[job]; e < graph_.predBegin[job + 1]; ++e) {
    uint32_t pred = graph_.preds[e];
    if (!finished_[pred])
      return text + ", which needs " + jobName(pred) + " (not run, on " +
             workerName(graph_.jobs[pred].worker) + ")";
  }
  const Job &info = graph_.jobs[job];
  if (!opts_.memoryCap.empty() && info.acquire > 0)
    return text + ", blocked by its memory cap (live " +
           std::to_string(live_[worker]) + " + " +
           std::to_string(info.acquire) + " > cap " +
           std::to_string(opts_.memoryCap[worker]) + ")";
  return text + ", which is ready but never started"; // not reachable
}

/// Names, for each worker with unfinished jobs, the job it waits on: its
/// next listed job (explicit order), its best ready job (blocked by the
/// cap), or else its best job that is not ready.
SimulationResult Simulator::deadlock() const {
  std::vector<Key> waitsOn(numWorkers_, kNoKey);
  for (int32_t w = 0; w < numWorkers_; ++w) {
    if (unfinished_[w] == 0)
      continue;
    if (orderMode_)
      waitsOn[w] = Key{0, graph_.order[w][workerOrder_[w].size()]};
    else if (!ready_[w].empty())
      waitsOn[w] = ready_[w].peek(kInt64Max);
  }
  if (!orderMode_) {
    for (uint32_t j = 0; j < numJobs_; ++j) {
      int32_t w = graph_.jobs[j].worker;
      if (start_[j] < 0 && ready_[w].empty())
        waitsOn[w] = std::min(waitsOn[w], Key{graph_.jobs[j].priority, j});
    }
  }
  std::string message = "deadlock: ";
  std::vector<uint32_t> blocked;
  for (int32_t w = 0; w < numWorkers_; ++w) {
    if (unfinished_[w] == 0)
      continue;
    if (!blocked.empty())
      message += "; ";
    message += describeWait(w, waitsOn[w].second);
    blocked.push_back(waitsOn[w].second);
  }
  return failure(std::move(message), std::move(blocked));
}

Timeline Simulator::timeline() const {
  Timeline result;
  result.start = start_;
  result.end = end_;
  result.position = position_;
  result.workerOrder = workerOrder_;
  result.busy.assign(numWorkers_, 0);
  for (uint32_t j = 0; j < numJobs_; ++j) {
    result.makespan = std::max(result.makespan, end_[j]);
    result.busy[graph_.jobs[j].worker] += graph_.jobs[j].duration;
  }
  result.peakLive = peakLive_;
  result.peakLiveBytes = peakLiveBytes_;
  return result;
}

} // namespace

SimulationResult simulate(const JobGraph &graph,
                          const SimulationOptions &options) {
  if (std::optional<SimulationResult> invalid = validate(graph, options))
    return std::move(*invalid);
  Successors succ(graph);
  if (std::optional<SimulationResult> cycle = findCycle(graph, succ))
    return std::move(*cycle);
  return Simulator(graph, options, succ).run();
}

} // namespace pipesched::scheduling

//===----------------------------------------------------------------------===//
// Accounting and verification of timelines
//===----------------------------------------------------------------------===//

pipesched::scheduling::LiveMemory pipesched::scheduling::accountLiveMemory(
    const JobGraph &graph, const std::vector<int64_t> &start,
    const std::vector<int64_t> &end) {
  const size_t W = size_t(std::max<int32_t>(graph.numWorkers, 0));
  // At equal times: releases by jobs that ran for a while, then
  // acquisitions, then releases by zero-duration jobs (which the scheduler
  // starts, and so finishes, only after the acquisitions of that instant).
  struct Event {
    int64_t time;
    int phase; // 0: release, 1: acquire, 2: release by a zero-duration job
    uint32_t job;
    int64_t units, bytes; ///< added to the live memory (negative: freed)
  };
  std::vector<std::vector<Event>> events(W);
  for (uint32_t j = 0; j < graph.jobs.size(); ++j) {
    const Job &job = graph.jobs[j];
    if (job.acquire != 0 || job.acquireBytes != 0)
      events[size_t(job.worker)].push_back(
          {start[j], 1, j, job.acquire, job.acquireBytes});
    if (job.releases >= 0 && size_t(job.releases) < graph.jobs.size()) {
      const Job &made = graph.jobs[size_t(job.releases)];
      auto [units, bytes] = releasedAmount(graph, job);
      events[size_t(made.worker)].push_back(
          {end[j], start[j] == end[j] ? 2 : 0, j, -units, -bytes});
    }
  }
  LiveMemory result{std::vector<int64_t>(W, 0), std::vector<int64_t>(W, 0)};
  for (size_t w = 0; w < W; ++w) {
    std::sort(events[w].begin(), events[w].end(),
              [](const Event &a, const Event &b) {
                return std::tie(a.time, a.phase, a.job) <
                       std::tie(b.time, b.phase, b.job);
              });
    int64_t live = 0, liveBytes = 0;
    for (const Event &e : events[w]) {
      live = saturatingAdd(live, e.units);
      liveBytes = saturatingAdd(liveBytes, e.bytes);
      result.peak[w] = std::max(result.peak[w], live);
      result.peakBytes[w] = std::max(result.peakBytes[w], liveBytes);
    }
  }
  return result;
}

std::string pipesched::scheduling::verifyTimeline(
    const JobGraph &graph, const SimulationOptions &options,
    const Timeline &t) {
  const size_t J = graph.jobs.size(), W = size_t(graph.numWorkers);
  auto job = [](size_t j) { return "job " + std::to_string(j); };
  if (t.start.size() != J || t.end.size() != J || t.position.size() != J ||
      t.workerOrder.size() != W || t.busy.size() != W ||
      t.peakLive.size() != W || t.peakLiveBytes.size() != W)
    return "the timeline's tables do not match the graph";
  std::vector<char> placed(J, 0);
  int64_t makespan = 0;
  std::vector<int64_t> busy(W, 0);
  for (size_t w = 0; w < W; ++w) {
    int64_t free = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < t.workerOrder[w].size(); ++i) {
      uint32_t j = t.workerOrder[w][i];
      if (j >= J || placed[j] || size_t(graph.jobs[j].worker) != w ||
          t.position[j] != int64_t(i))
        return job(j) + " is misplaced in worker " + std::to_string(w) +
               "'s order";
      placed[j] = 1;
      if (t.end[j] - t.start[j] != graph.jobs[j].duration)
        return job(j) + " runs " + std::to_string(t.end[j] - t.start[j]) +
               " ticks, its duration is " +
               std::to_string(graph.jobs[j].duration);
      if (t.start[j] < free)
        return job(j) + " starts at " + std::to_string(t.start[j]) +
               " while worker " + std::to_string(w) + " is busy until " +
               std::to_string(free);
      free = t.end[j];
      busy[w] += graph.jobs[j].duration;
      makespan = std::max(makespan, t.end[j]);
    }
  }
  for (size_t j = 0; j < J; ++j) {
    if (!placed[j])
      return job(j) + " is in no worker's order";
    for (uint32_t k = graph.predBegin[j]; k < graph.predBegin[j + 1]; ++k) {
      uint32_t p = graph.preds[k];
      int64_t ready = t.end[p] + options.transferBetween(graph.jobs[p].worker,
                                                         graph.jobs[j].worker);
      if (t.start[j] < ready)
        return job(j) + " starts at " + std::to_string(t.start[j]) +
               " before its input " + job(p) + " is there at " +
               std::to_string(ready);
    }
  }
  if (makespan != t.makespan)
    return "the makespan is " + std::to_string(makespan) + ", reported " +
           std::to_string(t.makespan);
  if (busy != t.busy)
    return "the busy times differ from the jobs' durations";
  // With zero durations the order of events within an instant is the
  // scheduler's to choose and the accounting is an upper bound; otherwise
  // both must agree exactly.
  bool instantJobs = false;
  for (const Job &j : graph.jobs)
    instantJobs |= j.duration == 0;
  LiveMemory live = accountLiveMemory(graph, t.start, t.end);
  for (size_t w = 0; w < W; ++w) {
    bool agree = instantJobs ? t.peakLive[w] <= live.peak[w] &&
                                   t.peakLiveBytes[w] <= live.peakBytes[w]
                             : t.peakLive[w] == live.peak[w] &&
                                   t.peakLiveBytes[w] == live.peakBytes[w];
    if (!agree)
      return "the reported peak live memory of worker " + std::to_string(w) +
             " differs from its accounting";
  }
  if (!instantJobs && !options.memoryCap.empty())
    for (size_t w = 0; w < W; ++w)
      if (options.memoryCap[w] >= 0 && live.peak[w] > options.memoryCap[w])
        return "worker " + std::to_string(w) + " holds " +
               std::to_string(live.peak[w]) + " live units, over its cap of " +
               std::to_string(options.memoryCap[w]);
  return "";
}
