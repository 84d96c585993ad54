//===- MemoryAwareSchedule.cpp - list scheduling under a memory limit -------===//

#include "pipesched/Scheduling/MemoryAwareSchedule.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <random>
#include <set>

using namespace pipesched::scheduling;

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// What a list schedule decides by, per job (by jobCoordIndex): its rank
/// among ready jobs (smaller first), and whether it takes the least
/// preferred free worker instead of the most (inputs and weights away
/// from it, a worker that may hold the activations others need freed).
struct ListChoices {
  std::vector<int64_t> rank;
  std::vector<uint8_t> flip;
};

/// One list schedule: the state of the event loop.
class ListScheduling {
public:
  ListScheduling(const SearchProblem &p, const ProblemJobs &g, int64_t transfer,
                 const ListChoices &choices)
      : p(p), g(g), transfer(transfer), rank(choices.rank),
        flip(choices.flip), limit(p.memoryLimit > 0 ? p.memoryLimit : kNever) {}

  ExplicitSchedule run();

private:
  const SearchProblem &p;
  const ProblemJobs &g;
  int64_t transfer;
  const std::vector<int64_t> &rank;
  const std::vector<uint8_t> &flip;
  int64_t limit;
  std::vector<int64_t> start, end, workerFree, live, sequence;
  int64_t nextSequence = 0;
  std::vector<int32_t> worker, predsLeft;
  std::vector<std::vector<uint32_t>> succs;
  std::vector<uint8_t> ranStage;
  /// Per microbatch: forwards not started, and activations held.
  std::vector<int64_t> forwardsLeft, held;
  /// Microbatches started and not drained (the banker's customers).
  std::set<int64_t> inFlight;
  /// Free activation slots of all workers.
  int64_t freeSlots = 0;
  /// Ready jobs, (rank, job): the first forwards of microbatches not yet
  /// started (`fresh`), and the others.
  std::set<std::pair<int64_t, uint32_t>> ready, fresh;
  using TimedJob = std::pair<int64_t, uint32_t>;
  std::priority_queue<TimedJob, std::vector<TimedJob>, std::greater<>> running;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> wakeups;

  void init();
  void finishUpTo(int64_t t);
  int64_t arrival(uint32_t j, int32_t w) const;
  /// The banker's rule: whether, after one more forward of microbatch b
  /// takes a slot, the microbatches in flight can still all finish.
  bool staysSafe(int64_t b) const;
  /// The worker that job j should take at t, or -1.
  int32_t chooseWorker(uint32_t j, int64_t t) const;
  void startJob(uint32_t j, int32_t w, int64_t t);
  void assignAt(int64_t t);
  /// Starts job j at t on the worker it should take, if any may.
  bool tryStart(uint32_t j, int64_t t);
  /// Makes job j ready (its inputs are all made).
  void makeReady(uint32_t j);
};
} // namespace

void ListScheduling::init() {
  size_t n = g.jobs.size(), W = size_t(p.workers);
  start.assign(n, kNever);
  end.assign(n, kNever);
  sequence.assign(n, 0);
  nextSequence = 0;
  worker.assign(n, -1);
  predsLeft.assign(n, 0);
  succs.assign(n, {});
  workerFree.assign(W, 0);
  live.assign(W, 0);
  forwardsLeft.assign(size_t(p.microbatches), p.stages);
  held.assign(size_t(p.microbatches), 0);
  ranStage.assign(size_t(p.stages) * W, 0);
  // More slots than activations in the step never matter (and would
  // overflow with huge limits).
  __int128 all = __int128(p.stages) * p.microbatches;
  freeSlots = limit == kNever
                  ? kNever
                  : int64_t(std::min(__int128(limit) * p.workers, all));
  for (size_t j = 0; j < n; ++j) {
    predsLeft[j] = int32_t(g.jobs[j].preds.size());
    for (uint32_t q : g.jobs[j].preds)
      succs[q].push_back(uint32_t(j));
    if (predsLeft[j] == 0)
      makeReady(uint32_t(j));
  }
}

void ListScheduling::makeReady(uint32_t j) {
  const ProblemJob &job = g.jobs[j];
  bool first = job.forward() && job.preds.empty() &&
               forwardsLeft[size_t(job.microbatch)] == p.stages;
  (first ? fresh : ready).insert({rank[j], j});
}

/// Finishes every job that ends by t: frees its activation, readies its
/// successors.
void ListScheduling::finishUpTo(int64_t t) {
  while (!running.empty() && running.top().first <= t) {
    uint32_t j = running.top().second;
    running.pop();
    if (int64_t r = g.jobs[j].releases; r >= 0 && limit != kNever) {
      --live[size_t(worker[size_t(r)])];
      ++freeSlots;
      int64_t b = g.jobs[j].microbatch;
      if (--held[size_t(b)] == 0 && forwardsLeft[size_t(b)] == 0)
        inFlight.erase(b);
    }
    for (uint32_t next : succs[j])
      if (--predsLeft[next] == 0)
        makeReady(next);
  }
}

int64_t ListScheduling::arrival(uint32_t j, int32_t w) const {
  int64_t at = 0;
  for (uint32_t q : g.jobs[j].preds)
    at = std::max(at, end[q] + (worker[q] != w ? transfer : 0));
  return at;
}

bool ListScheduling::staysSafe(int64_t b) const {
  // Those with every forward started drain by themselves; the others, least
  // need first, each take what they still need and then drain.
  int64_t available = freeSlots - 1;
  std::vector<std::pair<int64_t, int64_t>> needs; // (forwards left, held)
  auto visit = [&](int64_t left, int64_t holds) {
    if (left == 0)
      available += holds;
    else
      needs.push_back({left, holds});
  };
  visit(forwardsLeft[size_t(b)] - 1, held[size_t(b)] + 1);
  for (int64_t m : inFlight)
    if (m != b)
      visit(forwardsLeft[size_t(m)], held[size_t(m)]);
  std::sort(needs.begin(), needs.end());
  for (auto [left, holds] : needs) {
    if (left > available)
      return false;
    available += holds;
  }
  return available >= 0;
}

int32_t ListScheduling::chooseWorker(uint32_t j, int64_t t) const {
  const ProblemJob &job = g.jobs[j];
  int32_t best = -1;
  int bestScore = -1;
  for (int32_t w = 0; w < p.workers; ++w) {
    if (workerFree[size_t(w)] > t || arrival(j, w) > t)
      continue;
    if (job.forward() && live[size_t(w)] >= limit)
      continue;
    // Inputs at hand first, then the stage's weights at hand.
    bool holdsInput = std::any_of(job.preds.begin(), job.preds.end(),
                                  [&](uint32_t q) { return worker[q] == w; });
    bool ranBefore = ranStage[size_t(job.stage * p.workers + w)];
    int score = 2 * holdsInput + ranBefore;
    if (flip[j])
      score = 3 - score; // the least preferred worker instead
    if (score > bestScore)
      best = w, bestScore = score;
  }
  return best;
}

void ListScheduling::startJob(uint32_t j, int32_t w, int64_t t) {
  const ProblemJob &job = g.jobs[j];
  start[j] = t;
  end[j] = t + job.duration;
  worker[j] = w;
  sequence[j] = nextSequence++;
  workerFree[size_t(w)] = end[j];
  ranStage[size_t(job.stage * p.workers + w)] = 1;
  running.push({end[j], j});
  wakeups.push(end[j]);
  if (transfer > 0)
    wakeups.push(end[j] + transfer);
  if (!job.forward() || limit == kNever)
    return;
  inFlight.insert(job.microbatch);
  --forwardsLeft[size_t(job.microbatch)];
  ++held[size_t(job.microbatch)];
  --freeSlots;
  ++live[size_t(w)];
}

bool ListScheduling::tryStart(uint32_t j, int64_t t) {
  int32_t w = chooseWorker(j, t);
  if (w < 0 || (g.jobs[j].forward() && limit != kNever &&
                !staysSafe(g.jobs[j].microbatch)))
    return false;
  startJob(j, w, t);
  return true;
}

/// Starts, in rank order, every ready job that a worker can take at t. The
/// first forwards of microbatches not started are alike to the rules (no
/// inputs, the same look-ahead): once the best of them cannot start, none
/// can, and the rest are not tried.
void ListScheduling::assignAt(int64_t t) {
  int64_t idle = std::count_if(workerFree.begin(), workerFree.end(),
                               [&](int64_t free) { return free <= t; });
  bool freshBlocked = false;
  auto it = ready.begin();
  while (idle > 0) {
    bool takeFresh = !freshBlocked && !fresh.empty() &&
                     (it == ready.end() || *fresh.begin() < *it);
    if (!takeFresh && it == ready.end())
      break;
    uint32_t j = takeFresh ? fresh.begin()->second : it->second;
    if (!tryStart(j, t)) {
      freshBlocked |= takeFresh;
      it = takeFresh ? it : std::next(it);
      continue;
    }
    if (takeFresh)
      fresh.erase(fresh.begin());
    else
      it = ready.erase(it);
    // A job of no duration leaves its worker free.
    idle -= workerFree[size_t(worker[j])] > t;
  }
}

ExplicitSchedule ListScheduling::run() {
  init();
  size_t n = g.jobs.size(), started = 0;
  int64_t t = 0;
  while (true) {
    // Jobs of no duration end where they start: repeat until still.
    for (size_t done = SIZE_MAX; done != started;) {
      done = started;
      finishUpTo(t);
      size_t before = ready.size() + fresh.size();
      assignAt(t);
      started += before - ready.size() - fresh.size();
    }
    if (started == n)
      break;
    while (!wakeups.empty() && wakeups.top() <= t)
      wakeups.pop();
    if (wakeups.empty())
      return {}; // nothing runs and nothing can start: no schedule
    t = wakeups.top();
  }
  ExplicitSchedule out;
  out.worker = worker;
  out.start = start;
  out.sequence = sequence;
  for (size_t j = 0; j < n; ++j)
    out.makespan = std::max(out.makespan, end[j]);
  return out;
}

ExplicitSchedule pipesched::scheduling::listScheduleUnderMemory(
    const SearchProblem &problem, int64_t transferTime,
    const std::vector<int64_t> &rank) {
  ProblemJobs graph = buildProblemJobs(problem);
  if (rank.size() != graph.jobs.size() || !fitsInTime(problem, transferTime))
    return {};
  ListChoices choices{rank, std::vector<uint8_t>(graph.jobs.size(), 0)};
  return ListScheduling(problem, graph, transferTime, choices).run();
}

/// Ranks from a rule: backward first (finish what is in flight, free its
/// memory) or forward first (fill the pipeline); by microbatch, forwards
/// down the stages and backwards up.
static std::vector<int64_t> ruleRanks(const ProblemJobs &g, bool backwardFirst) {
  auto key = [&](uint32_t j) {
    const ProblemJob &job = g.jobs[j];
    int kind = job.direction == Direction::Forward          ? 1
               : job.direction == Direction::BackwardWeight ? 2
                                                            : 0;
    if (!backwardFirst)
      kind = job.forward() ? 0 : kind + 1;
    int64_t along = job.forward() ? job.stage : -job.stage;
    return std::tuple(kind, job.microbatch, along, j);
  };
  std::vector<uint32_t> order(g.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<int64_t> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    rank[order[k]] = int64_t(k);
  return rank;
}

/// The schedule's jobs in start order (then by worker) as ranks, with the
/// jobs at positions i and i + k swapped.
static std::vector<int64_t> swappedRanks(const ExplicitSchedule &schedule,
                                         size_t i, size_t k) {
  std::vector<uint32_t> order(schedule.start.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(schedule.start[a], schedule.sequence[a]) <
           std::pair(schedule.start[b], schedule.sequence[b]);
  });
  if (k > 0 && i + k < order.size())
    std::swap(order[i], order[i + k]);
  std::vector<int64_t> rank(order.size());
  for (size_t r = 0; r < order.size(); ++r)
    rank[order[r]] = int64_t(r);
  return rank;
}

namespace {
/// Hill climbing over list choices from one starting rule: each step
/// ranks the current schedule's jobs by start, then swaps two jobs close in
/// that order or flips one job's worker preference; a schedule no longer
/// than the current one becomes current (plateaus are crossed).
class LocalSearch {
public:
  LocalSearch(const SearchProblem &p, const ProblemJobs &g, int64_t transfer,
              uint64_t seed)
      : p(p), g(g), transfer(transfer), random(seed) {}

  ExplicitSchedule climb(std::vector<int64_t> rank, int64_t steps) {
    size_t n = g.jobs.size();
    ListChoices choices{std::move(rank), std::vector<uint8_t>(n, 0)};
    ExplicitSchedule current = ListScheduling(p, g, transfer, choices).run();
    for (int64_t k = 1; k < steps && !current.empty(); ++k) {
      ListChoices next{{}, choices.flip};
      size_t i = size_t(random() % n);
      size_t step = 0; // 0: flip job i's preference instead of a swap
      if (random() % 2)
        step = 1 + size_t(random() % uint64_t(2 * p.workers));
      else
        next.flip[i] ^= 1;
      next.rank = swappedRanks(current, i, step);
      ExplicitSchedule tried = ListScheduling(p, g, transfer, next).run();
      if (!tried.empty() && tried.makespan <= current.makespan) {
        current = std::move(tried);
        choices = std::move(next);
      }
    }
    return current;
  }

private:
  const SearchProblem &p;
  const ProblemJobs &g;
  int64_t transfer;
  // Raw engine output, not a distribution: the same on every platform.
  std::mt19937_64 random;
};
} // namespace

ExplicitSchedule
pipesched::scheduling::searchUnderMemory(const SearchProblem &problem,
                                         int64_t transferTime,
                                         const LocalSearchOptions &options) {
  if (!fitsInTime(problem, transferTime))
    return {};
  ProblemJobs graph = buildProblemJobs(problem);
  LocalSearch search(problem, graph, transferTime, options.seed);
  int64_t perRule = std::max<int64_t>(1, options.iterations / 2);
  ExplicitSchedule best;
  for (bool backwardFirst : {true, false}) {
    ExplicitSchedule found =
        search.climb(ruleRanks(graph, backwardFirst), perRule);
    if (!found.empty() && (best.empty() || found.makespan < best.makespan))
      best = std::move(found);
  }
  return best;
}
