//===- CommPlan.cpp - transfers, fetches and reductions of a schedule -----===//

#include "pipesched/Scheduling/CommPlan.h"
#include "pipesched/Scheduling/Saturating.h"

#include "pipesched/Scheduling/DeadlockCheck.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

using namespace pipesched::scheduling;

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// A time with ties broken: (ticks, step within the ticks). Zero-length jobs
/// at one time take one step each, in causal order, so that communication
/// is placed among them as among jobs that take time.
using Instant = std::pair<int64_t, int64_t>;

std::string jobName(const CommProblem &p, uint32_t j) {
  static const char *names[] = {"forward", "backward", "backward_weight"};
  const PlannedJob &job = p.jobs[j];
  return std::string(names[static_cast<int>(job.direction)]) + " (s=" +
         std::to_string(job.stage) + ", b=" + std::to_string(job.microbatch) +
         ")";
}

/// A worker's jobs in program order and the times of its points.
struct WorkerJobs {
  std::vector<uint32_t> jobs;
  std::vector<Instant> pointTime; // jobs.size() + 1 entries

  /// The first point in [lo, hi] whose time is >= t (hi if none).
  uint32_t firstAtOrAfter(Instant t, uint32_t lo, uint32_t hi) const {
    auto it = std::lower_bound(pointTime.begin() + lo, pointTime.begin() + hi, t);
    return static_cast<uint32_t>(it - pointTime.begin());
  }
};

/// A message before tags: when it is posted and at which points.
struct Pending {
  Message message;
  Instant time;
  int64_t seq;
  uint32_t senderAt, receiverAt;
};

struct Release {
  int32_t worker;
  int64_t stage;
  uint32_t at;
};

/// An entry attached to a point, sorted by its global key.
struct Entry {
  PlanOp::Kind kind;
  uint32_t index;
  std::tuple<Instant, int, int64_t> key;
  bool isPointToPoint() const {
    return kind == PlanOp::Send || kind == PlanOp::Recv;
  }
};
/// The entries attached to every point of every worker, in one array:
/// worker c's point b is global point base[c] + b. Added in any order,
/// then bucketed by point (a counting sort, no vector per point: there are
/// as many points as jobs); each point's entries come out in key order
/// (keys are distinct, so any sort gives the one order).
class PointEntries {
public:
  PointEntries(const std::vector<WorkerJobs> &workers, size_t expected)
      : base(workers.size() + 1, 0) {
    for (size_t c = 0; c < workers.size(); ++c)
      base[c + 1] = base[c] + uint32_t(workers[c].jobs.size()) + 1;
    added.reserve(expected);
  }
  void add(int32_t worker, uint32_t point, Entry entry) {
    added.push_back({base[worker] + point, entry});
  }
  void bucket() {
    begin.assign(size_t(base.back()) + 1, 0);
    for (const auto &[point, entry] : added)
      ++begin[point + 1];
    for (size_t i = 1; i < begin.size(); ++i)
      begin[i] += begin[i - 1];
    entries.resize(added.size());
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (const auto &[point, entry] : added)
      entries[fill[point]++] = entry;
    std::vector<std::pair<uint32_t, Entry>>().swap(added);
  }
  /// Sorts worker c's entries at point b into key order and returns them
  /// (after bucket()).
  std::pair<const Entry *, size_t> sortEntriesAt(int32_t c, uint32_t b) {
    Entry *first = entries.data() + begin[base[c] + b];
    Entry *last = entries.data() + begin[base[c] + b + 1];
    std::sort(first, last,
              [](const Entry &x, const Entry &y) { return x.key < y.key; });
    return {first, size_t(last - first)};
  }

private:
  std::vector<uint32_t> base, begin;
  std::vector<std::pair<uint32_t, Entry>> added;
  std::vector<Entry> entries;
};
} // namespace

std::string CommProblem::check() const {
  if (numWorkers < 1)
    return "the number of workers must be positive";
  if (prefetchDepth < 0)
    return "prefetch-depth must be non-negative";
  if (inputBegin.size() != jobs.size() + 1 || inputBegin.back() != inputs.size())
    return "the input lists do not match the jobs";
  std::vector<std::vector<char>> seen(numWorkers);
  std::vector<size_t> count(numWorkers, 0);
  for (const PlannedJob &j : jobs)
    if (j.worker >= 0 && j.worker < numWorkers)
      ++count[j.worker];
  for (int32_t w = 0; w < numWorkers; ++w)
    seen[w].assign(count[w], 0);
  for (uint32_t i = 0; i < jobs.size(); ++i) {
    const PlannedJob &j = jobs[i];
    if (j.worker < 0 || j.worker >= numWorkers || j.owner < 0 ||
        j.owner >= numWorkers)
      return jobName(*this, i) + " is placed outside [0, " +
             std::to_string(numWorkers) + ")";
    if (j.stage < 0 || j.stage >= numStages)
      return jobName(*this, i) + " has a stage outside [0, " +
             std::to_string(numStages) + ")";
    if (j.start > j.end)
      return jobName(*this, i) + " ends before it starts";
    if (j.position < 0 || static_cast<size_t>(j.position) >= count[j.worker] ||
        seen[j.worker][j.position])
      return jobName(*this, i) + " has position " + std::to_string(j.position) +
             ", not a permutation of worker " + std::to_string(j.worker) +
             "'s jobs";
    seen[j.worker][j.position] = 1;
    for (uint32_t k = inputBegin[i]; k < inputBegin[i + 1]; ++k) {
      if (inputs[k] >= jobs.size())
        return jobName(*this, i) + " consumes a job out of range";
      if (jobs[inputs[k]].end > j.start)
        return jobName(*this, i) + " starts before its input " +
               jobName(*this, inputs[k]) + " ends";
    }
  }
  std::vector<int64_t> tiedIn(size_t(std::max<int64_t>(numStages, 0)), -1);
  for (size_t g = 0; g < tiedGroups.size(); ++g) {
    if (tiedGroups[g].size() < 2)
      return "tied group " + std::to_string(g) + " has fewer than two stages";
    for (int64_t s : tiedGroups[g]) {
      if (s < 0 || s >= numStages)
        return "tied group " + std::to_string(g) + " names stage " +
               std::to_string(s) + ", outside [0, " +
               std::to_string(numStages) + ")";
      if (tiedIn[s] >= 0)
        return "stage " + std::to_string(s) + " is tied twice";
      tiedIn[s] = int64_t(g);
    }
  }
  return "";
}

/// Each job's (start, end) with ties broken. A job that takes time starts at
/// (start, k), k the step after the zero-length jobs it waits for at its
/// start time, and ends at (end, 0); a zero-length job at t runs from (t, k)
/// to (t, k + 1). A job waits for its inputs and for the job before it on
/// its worker. With no zero-length job every instant is (ticks, 0): the
/// plan is the plain time-based one.
static std::vector<std::pair<Instant, Instant>>
tieBrokenSpans(const CommProblem &p, const std::vector<WorkerJobs> &workers) {
  const size_t n = p.jobs.size();
  std::vector<int64_t> step(n, 0); // the k of the start
  std::vector<uint8_t> state(n, 0); // 0 new, 1 on the stack, 2 done
  auto endStep = [&](uint32_t j) {
    return p.jobs[j].start == p.jobs[j].end ? step[j] + 1 : 0;
  };
  // Visits the jobs j waits for at its start time (tied: they end then).
  auto forEachTied = [&](uint32_t j, auto &&visit) {
    const PlannedJob &job = p.jobs[j];
    if (job.position > 0) {
      uint32_t prev = workers[job.worker].jobs[job.position - 1];
      if (p.jobs[prev].end == job.start)
        visit(prev);
    }
    for (uint32_t k = p.inputBegin[j]; k < p.inputBegin[j + 1]; ++k)
      if (p.jobs[p.inputs[k]].end == job.start)
        visit(p.inputs[k]);
  };
  std::vector<uint32_t> stack;
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root])
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      uint32_t j = stack.back();
      if (state[j] == 0) {
        state[j] = 1;
        forEachTied(j, [&](uint32_t q) {
          if (state[q] == 0)
            stack.push_back(q);
        });
        continue;
      }
      stack.pop_back();
      if (state[j] == 2)
        continue;
      // A job still on the stack is a cycle of zero-length jobs (a program
      // that deadlocks): it adds nothing here; verify() reports it.
      int64_t k = 0;
      forEachTied(j, [&](uint32_t q) {
        if (state[q] == 2)
          k = std::max(k, endStep(q));
      });
      step[j] = k;
      state[j] = 2;
    }
  }
  std::vector<std::pair<Instant, Instant>> span(n);
  for (uint32_t j = 0; j < n; ++j)
    span[j] = {{p.jobs[j].start, step[j]}, {p.jobs[j].end, endStep(j)}};
  return span;
}

namespace {
/// A reduction placed in time, before the global order: its members'
/// points.
struct Placed {
  Reduction reduction;
  Instant time;
  std::vector<std::pair<int32_t, uint32_t>> at; // (member, point)
};

/// planCommunication's state, built in steps: each worker's jobs and
/// points; data messages, weight windows and reductions placed at points;
/// their global order (tags); everything attached to the points; the
/// programs read off the points.
struct Planner {
  explicit Planner(const CommProblem &problem)
      : p(problem), W(problem.numWorkers) {}

  uint32_t indexOnWorker(uint32_t job) const {
    return static_cast<uint32_t>(p.jobs[job].position);
  }

  /// Each worker's jobs in order, with the times of its points.
  void orderJobs() {
    workers.resize(W);
    for (uint32_t i = 0; i < p.jobs.size(); ++i)
      workers[p.jobs[i].worker].jobs.push_back(0);
    for (uint32_t i = 0; i < p.jobs.size(); ++i)
      workers[p.jobs[i].worker].jobs[p.jobs[i].position] = i;
    span = tieBrokenSpans(p, workers);
    for (WorkerJobs &w : workers) {
      w.pointTime.reserve(w.jobs.size() + 1);
      for (uint32_t job : w.jobs)
        w.pointTime.push_back(span[job].first);
      w.pointTime.push_back({kNever, 0});
    }
  }

  /// Data messages, once per (producer, receiving worker).
  void planDataMessages() {
    // Per producer, its messages so far: a short list (a producer has a few
    // receiving workers), no hash table over millions of jobs; past kShort
    // receivers (a stage consumed on many workers) a hash table for that
    // producer, so that no lookup walks more than kShort entries. The links
    // are indexed like `pending`: the data messages come first in it (the
    // weight messages, pushed after this loop, have none).
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    constexpr uint8_t kShort = 8;
    std::vector<uint32_t> firstMessage(p.jobs.size(), kNone), nextMessage;
    std::vector<uint8_t> receivers(p.jobs.size(), 0); // saturates at kShort + 1
    std::unordered_map<uint64_t, uint32_t> wide;      // producer * W + receiver
    auto findMessage = [&](uint32_t producer, int32_t receiver) {
      if (receivers[producer] > kShort) {
        auto it = wide.find(uint64_t(producer) * W + uint64_t(receiver));
        return it == wide.end() ? kNone : it->second;
      }
      uint32_t m = firstMessage[producer];
      while (m != kNone && pending[m].message.receiver != receiver)
        m = nextMessage[m];
      return m;
    };
    auto addMessage = [&](uint32_t producer, uint32_t index) {
      nextMessage.push_back(firstMessage[producer]);
      firstMessage[producer] = index;
      if (receivers[producer] <= kShort && ++receivers[producer] <= kShort)
        return;
      // Past kShort: every message of the producer is in the table.
      for (uint32_t m = index; m != kNone; m = nextMessage[m])
        wide.emplace(
            uint64_t(producer) * W + uint64_t(pending[m].message.receiver), m);
    };
    for (uint32_t c = 0; c < p.jobs.size(); ++c) {
      const PlannedJob &consumer = p.jobs[c];
      for (uint32_t k = p.inputBegin[c]; k < p.inputBegin[c + 1]; ++k) {
        uint32_t producer = p.inputs[k];
        const PlannedJob &made = p.jobs[producer];
        if (made.worker == consumer.worker)
          continue;
        uint32_t consumerAt = indexOnWorker(c);
        if (uint32_t same = findMessage(producer, consumer.worker);
            same != kNone) {
          Pending &m = pending[same];
          m.receiverAt = std::min(m.receiverAt, consumerAt);
          continue;
        }
        Message m{made.direction == Direction::Forward ? Message::Activation
                  : made.direction == Direction::Scan    ? Message::Scan
                                                         : Message::Gradient,
                  made.worker, consumer.worker, made.stage, made.microbatch,
                  producer, 0,
                  made.outputBytes >= 0 ? made.outputBytes : p.actBytes};
        pending.push_back({m, span[producer].second, int64_t(pending.size()),
                           indexOnWorker(producer) + 1, consumerAt});
        addMessage(producer, uint32_t(pending.size() - 1));
      }
    }
    // Both ends at their first point at or after the production time: the
    // sender after the producer, the receiver no later than its consumer.
    for (Pending &m : pending) {
      const WorkerJobs &s = workers[m.message.sender],
                       &r = workers[m.message.receiver];
      m.senderAt = s.firstAtOrAfter(m.time, m.senderAt, s.jobs.size());
      m.receiverAt = r.firstAtOrAfter(m.time, 0, m.receiverAt);
    }
  }

  void planWeightWindows() {
    // A worker that owns a replica of a stage (the w_weights of some job of
    // it) computes every job of that stage with its own replica: replicas are
    // equal until the optimizer step, and a program never fetches a stage its
    // rank owns (the runtime refuses such a fetch).
    std::vector<std::unordered_set<int64_t>> ownedBy(W);
    for (const PlannedJob &job : p.jobs)
      ownedBy[job.owner].insert(job.stage);
    auto weightsFrom = [&](int32_t c, const PlannedJob &job) {
      return ownedBy[c].count(job.stage) ? c : job.owner;
    };

    // Weight windows: a copy fetched for a run of consecutive jobs of one
    // stage is released after the run.
    for (int32_t c = 0; c < W; ++c) {
      const WorkerJobs &w = workers[c];
      std::unordered_map<int64_t, uint32_t> releasedAt; // stage -> last release
      for (uint32_t i = 0; i < w.jobs.size();) {
        const PlannedJob &job = p.jobs[w.jobs[i]];
        const int32_t from = weightsFrom(c, job);
        uint32_t end = i + 1;
        while (end < w.jobs.size() && p.jobs[w.jobs[end]].stage == job.stage &&
               weightsFrom(c, p.jobs[w.jobs[end]]) == from)
          ++end;
        if (from != c) {
          uint32_t fetchAt = i >= uint64_t(p.prefetchDepth)
                                 ? i - static_cast<uint32_t>(p.prefetchDepth)
                                 : 0;
          // Never hold two copies of one stage: wait for the last release.
          auto last = releasedAt.find(job.stage);
          if (last != releasedAt.end())
            fetchAt = std::max(fetchAt, last->second);
          Message m{Message::Weights, from, c, job.stage, -1, 0, 0,
                    p.weightBytes};
          Instant time = w.pointTime[fetchAt];
          const WorkerJobs &o = workers[from];
          pending.push_back({m, time, int64_t(pending.size()),
                             o.firstAtOrAfter(time, 0, o.jobs.size()),
                             fetchAt});
          releases.push_back({c, job.stage, end});
          releasedAt[job.stage] = end;
        }
        i = end;
      }
    }
  }

  /// One reduction per stage, after its last weight-gradient job.
  void placeReductions() {
    const int64_t S = p.numStages;
    std::vector<std::set<int32_t>> members(S);
    owners.resize(S);
    lastGradJob.resize(S);
    gradTime.assign(S, {0, 0});
    plan.owns.resize(W);
    for (int32_t c = 0; c < W; ++c)
      for (uint32_t i = 0; i < workers[c].jobs.size(); ++i) {
        const PlannedJob &job = p.jobs[workers[c].jobs[i]];
        owners[job.stage].insert(job.owner);
        if (job.direction != p.gradientJob)
          continue;
        lastGradJob[job.stage][c] = i;
        gradTime[job.stage] =
            std::max(gradTime[job.stage], span[workers[c].jobs[i]].second);
      }
    for (int64_t s = 0; s < S; ++s) {
      Placed r{{s, {}, {}, p.weightBytes}, gradTime[s], {}};
      r.reduction.owners.assign(owners[s].begin(), owners[s].end());
      members[s] = owners[s];
      for (auto &[worker, index] : lastGradJob[s])
        members[s].insert(worker);
      r.reduction.members.assign(members[s].begin(), members[s].end());
      for (int32_t m : r.reduction.members) {
        const WorkerJobs &w = workers[m];
        auto last = lastGradJob[s].find(m);
        uint32_t lo = last == lastGradJob[s].end() ? 0 : last->second + 1;
        r.at.push_back({m, w.firstAtOrAfter(r.time, lo, w.jobs.size())});
      }
      for (int32_t o : r.reduction.owners)
        plan.owns[o].push_back(s);
      placed.push_back(std::move(r));
    }
    // Every member meets collectives in one global (time, stage) order.
    std::sort(placed.begin(), placed.end(),
              [](const Placed &a, const Placed &b) {
                return std::tie(a.time, a.reduction.stage) <
                       std::tie(b.time, b.reduction.stage);
              });
  }

  /// Messages in the global (time, creation) order: their tags.
  void numberMessages() {
    std::stable_sort(pending.begin(), pending.end(),
                     [](const Pending &a, const Pending &b) {
                       return std::tie(a.time, a.seq) < std::tie(b.time, b.seq);
                     });
    for (size_t i = 0; i < pending.size(); ++i) {
      pending[i].message.tag = int64_t(i);
      plan.messages.push_back(pending[i].message);
    }
  }

  void attachCommunication(PointEntries &at) {
    // Attach everything to points, keyed by the global order. Releases come
    // first at a point (they only free memory).
    for (const Release &r : releases)
      at.add(r.worker, r.at,
             {PlanOp::ReleaseWeights,
              uint32_t(r.stage),
              {{std::numeric_limits<int64_t>::min(), 0}, 0, r.stage}});
    for (uint32_t i = 0; i < pending.size(); ++i) {
      const Pending &m = pending[i];
      std::tuple<Instant, int, int64_t> key{m.time, 1, m.message.tag};
      at.add(m.message.sender, m.senderAt, {PlanOp::Send, i, key});
      at.add(m.message.receiver, m.receiverAt, {PlanOp::Recv, i, key});
    }
    // A tied stage steps its optimizer after its group's tied reduction.
    const int64_t S = p.numStages;
    std::vector<char> tied(S, 0);
    for (const std::vector<int64_t> &group : p.tiedGroups)
      for (int64_t s : group)
        tied[s] = 1;
    reductionOf.assign(S, 0);
    for (uint32_t i = 0; i < placed.size(); ++i) {
      const Placed &r = placed[i];
      reductionOf[r.reduction.stage] = i;
      for (auto [member, point] : r.at) {
        if (r.reduction.members.size() > 1)
          at.add(member, point,
              {PlanOp::Collective, i, {r.time, 2, r.reduction.stage}});
        if (!tied[r.reduction.stage] &&
            std::binary_search(r.reduction.owners.begin(),
                               r.reduction.owners.end(), member))
          at.add(member, point,
              {PlanOp::OptimizerStep, i, {r.time, 3, r.reduction.stage}});
      }
      plan.reductions.push_back(r.reduction);
    }
  }

  void attachTiedReductions(PointEntries &at) {
    // Per tie: after the last reduction of its stages (time, then id S + g:
    // after every stage's reduction at that time), on every owner of one of
    // its stages, at its first point after its own gradient jobs of them.
    const int64_t S = p.numStages;
    for (size_t g = 0; g < p.tiedGroups.size(); ++g) {
      const std::vector<int64_t> &group = p.tiedGroups[g];
      Instant time{0, 0};
      std::set<int32_t> tiedOwners;
      for (int64_t s : group) {
        time = std::max(time, gradTime[s]);
        tiedOwners.insert(owners[s].begin(), owners[s].end());
      }
      bool local = true; // every owner owns every stage of the group
      for (int64_t s : group)
        local = local && owners[s].size() == tiedOwners.size();
      std::tuple<Instant, int, int64_t> key{time, 2, S + int64_t(g)};
      auto attach = [&](int32_t m, uint32_t index) {
        const WorkerJobs &w = workers[m];
        uint32_t lo = 0;
        for (int64_t s : group) {
          auto last = lastGradJob[s].find(m);
          if (last != lastGradJob[s].end())
            lo = std::max(lo, last->second + 1);
        }
        uint32_t point = w.firstAtOrAfter(time, lo, w.jobs.size());
        at.add(m, point, {PlanOp::TiedGrad, index, key});
        for (int64_t s : group)
          if (owners[s].count(m))
            at.add(m, point,
                {PlanOp::OptimizerStep, reductionOf[s], {time, 3, s}});
      };
      if (local) {
        for (int32_t m : tiedOwners) {
          attach(m, uint32_t(plan.tied.size()));
          plan.tied.push_back({int64_t(g), {m}, p.weightBytes});
        }
        continue;
      }
      for (int32_t m : tiedOwners)
        attach(m, uint32_t(plan.tied.size()));
      plan.tied.push_back(
          {int64_t(g),
           std::vector<int32_t>(tiedOwners.begin(), tiedOwners.end()),
           p.weightBytes});
    }
  }

  void assemblePrograms(PointEntries &at) {
    // Each worker's program: at every point its entries in key order (runs of
    // point-to-point operations of length > 1 form a group), then its job.
    plan.programs.resize(W);
    for (int32_t c = 0; c < W; ++c) {
      std::vector<PlanOp> &program = plan.programs[c];
      int32_t groups = 0;
      const WorkerJobs &w = workers[c];
      for (uint32_t b = 0; b <= w.jobs.size(); ++b) {
        auto [entries, count] = at.sortEntriesAt(c, b);
        for (size_t e = 0; e < count;) {
          size_t end = e + 1;
          while (entries[e].isPointToPoint() && end < count &&
                 entries[end].isPointToPoint())
            ++end;
          int32_t group = end - e > 1 ? groups++ : -1;
          for (; e < end; ++e)
            program.push_back({entries[e].kind, entries[e].index, group});
        }
        if (b < w.jobs.size())
          program.push_back({PlanOp::Job, w.jobs[b], -1});
      }
    }
  }

  const CommProblem &p;
  const int32_t W;
  CommPlan plan;
  std::vector<WorkerJobs> workers;
  std::vector<std::pair<Instant, Instant>> span; // per job
  std::vector<Pending> pending;
  std::vector<Release> releases;
  // Per stage: its owners, each worker's last weight-gradient job of it
  // (an index on the worker), the time of its last one, its reduction.
  std::vector<std::set<int32_t>> owners;
  std::vector<std::map<int32_t, uint32_t>> lastGradJob;
  std::vector<Instant> gradTime;
  std::vector<uint32_t> reductionOf;
  std::vector<Placed> placed; // in the global (time, stage) order
};
} // namespace

CommPlan pipesched::scheduling::planCommunication(const CommProblem &p) {
  Planner planner(p);
  planner.orderJobs();
  planner.planDataMessages();
  planner.planWeightWindows();
  planner.placeReductions();
  planner.numberMessages();
  PointEntries at(planner.workers, 2 * planner.pending.size() +
                                       planner.releases.size() +
                                       2 * planner.placed.size());
  planner.attachCommunication(at);
  planner.attachTiedReductions(at);
  at.bucket();
  planner.assemblePrograms(at);
  return std::move(planner.plan);
}

namespace {
/// CommPlan::verify's state: what each worker holds and has done, and the
/// abstract programs the deadlock check runs.
struct PlanChecker {
  PlanChecker(const CommPlan &plan, const CommProblem &problem)
      : plan(plan), p(problem), jobSeen(p.jobs.size(), 0),
        messageEnds(plan.messages.size(), 0), tieOf(p.numStages, -1),
        ranks(p.numWorkers), heldOn(p.jobs.size(), -1) {
    for (size_t g = 0; g < p.tiedGroups.size(); ++g)
      for (int64_t s : p.tiedGroups[g])
        tieOf[s] = int64_t(g);
  }

  /// Worker w's program op by op; "" when it is sound.
  std::string checkWorker(int32_t w) {
    fetched.assign(p.numStages, 0);
    stepped.assign(p.numStages, 0);
    tiedDone.assign(p.tiedGroups.size(), 0);
    lastPosition = -1;
    const std::vector<PlanOp> &program = plan.programs[w];
    for (size_t i = 0; i < program.size(); ++i) {
      const PlanOp &op = program[i];
      // Only transfers are grouped: the first op of a group opens its step.
      if (op.group >= 0 && op.kind != PlanOp::Send && op.kind != PlanOp::Recv)
        return where(w, i) + "a group holds an op that is not a transfer";
      sameGroup = op.group >= 0 && i > 0 && program[i - 1].group == op.group;
      if (std::string error = checkOp(w, i, op); !error.empty())
        return where(w, i) + error;
    }
    for (int64_t s : plan.owns[w])
      if (!stepped[s])
        return "worker " + std::to_string(w) + " owns stage " +
               std::to_string(s) + " but never steps its optimizer";
    return "";
  }

  /// After every worker: every job and message placed, no deadlock.
  std::string finish() const {
    for (uint32_t i = 0; i < p.jobs.size(); ++i)
      if (!jobSeen[i])
        return jobName(p, i) + " is in no program";
    for (size_t m = 0; m < plan.messages.size(); ++m)
      if (messageEnds[m] != 3)
        return "message " + std::to_string(plan.messages[m].tag) +
               " lacks an end";
    DeadlockResult result = checkDeadlockFree(ranks);
    if (result.status != DeadlockResult::Ok)
      return result.status == DeadlockResult::Mismatch
                 ? "matched operations differ in " + result.field
                 : "the programs deadlock";
    return "";
  }

private:
  static std::string where(int32_t w, size_t i) {
    return "worker " + std::to_string(w) + ", op " + std::to_string(i) + ": ";
  }
  bool owns(int32_t w, int64_t s) const {
    return std::binary_search(plan.owns[w].begin(), plan.owns[w].end(), s);
  }
  /// The abstract step op i of worker w communicates in (a group's ops
  /// share one; local ops complete at once and make none).
  ProgramStep &stepOf(int32_t w, size_t i) {
    if (!sameGroup)
      ranks[w].push_back(ProgramStep{});
    ProgramStep &step = ranks[w].back();
    step.id = uint32_t(i);
    return step;
  }

  std::string checkOp(int32_t w, size_t i, const PlanOp &op) {
    switch (op.kind) {
    case PlanOp::Job:
      return checkJob(w, op.index);
    case PlanOp::Send:
    case PlanOp::Recv:
      return checkTransfer(w, i, op);
    case PlanOp::ReleaseWeights:
      if (!fetched[op.index])
        return "releases stage " + std::to_string(op.index) +
               "'s weights, which it does not hold";
      fetched[op.index] = 0;
      return "";
    case PlanOp::Collective:
      return checkReduction(w, i, plan.reductions[op.index]);
    case PlanOp::OptimizerStep:
      return checkOptimizerStep(w, plan.reductions[op.index].stage);
    case PlanOp::TiedGrad:
      return checkTiedReduction(w, i, plan.tied[op.index]);
    }
    return "";
  }

  std::string checkJob(int32_t w, uint32_t j) {
    const PlannedJob &job = p.jobs[j];
    if (job.worker != w || jobSeen[j] || job.position <= lastPosition)
      return jobName(p, j) + " is out of place, repeated or out of order";
    jobSeen[j] = 1;
    lastPosition = job.position;
    if (job.direction == p.gradientJob && tieOf[job.stage] >= 0 &&
        tiedDone[tieOf[job.stage]])
      return jobName(p, j) + " computes a weight gradient of tied stage " +
             std::to_string(job.stage) + " after its tied reduction";
    if (job.owner != w && !owns(w, job.stage) && !fetched[job.stage])
      return jobName(p, j) + " runs without stage " +
             std::to_string(job.stage) + "'s weights";
    for (uint32_t k = p.inputBegin[j]; k < p.inputBegin[j + 1]; ++k)
      if (heldOn[p.inputs[k]] != w)
        return jobName(p, j) + " consumes " + jobName(p, p.inputs[k]) +
               ", which is not on worker " + std::to_string(w);
    heldOn[j] = w;
    return "";
  }

  std::string checkTransfer(int32_t w, size_t i, const PlanOp &op) {
    const Message &m = plan.messages[op.index];
    bool send = op.kind == PlanOp::Send;
    if ((send ? m.sender : m.receiver) != w ||
        (messageEnds[op.index] & (send ? 1 : 2)))
      return "message " + std::to_string(m.tag) + " is out of place or repeated";
    messageEnds[op.index] |= send ? 1 : 2;
    if (m.kind != Message::Weights) {
      if (send && heldOn[m.producer] != w)
        return "sends " + jobName(p, m.producer) + "'s output before it is made";
      if (!send)
        heldOn[m.producer] = w;
    } else if (!send) {
      if (owns(w, m.stage) || fetched[m.stage])
        return "fetches stage " + std::to_string(m.stage) +
               "'s weights, which it owns or holds already";
      fetched[m.stage] = 1;
    }
    ProgramStep &step = stepOf(w, i);
    step.kind = ProgramStep::Group;
    Payload payload{m.kind, m.stage, m.microbatch, m.tag, m.bytes, -1};
    step.ops.push_back(
        CommOp{send, send ? m.receiver : m.sender, payload, uint32_t(i)});
    return "";
  }

  std::string checkReduction(int32_t w, size_t i, const Reduction &r) {
    // The tied sum read this stage's gradient: reducing it again would
    // add to a copy already replaced by the sum.
    if (tieOf[r.stage] >= 0 && tiedDone[tieOf[r.stage]])
      return "gradient reduction of tied stage " + std::to_string(r.stage) +
             " after its tied reduction";
    ProgramStep &step = stepOf(w, i);
    step.kind = ProgramStep::Collective;
    step.members = r.members;
    step.payload =
        Payload{r.isAllReduce() ? PayloadKind::AllReduce : PayloadKind::Reduce,
                r.stage, 0, 0, r.bytes,
                r.isAllReduce() ? -1 : r.owners.front()};
    return "";
  }

  std::string checkOptimizerStep(int32_t w, int64_t s) {
    if (!owns(w, s) || stepped[s])
      return "optimizer step of stage " + std::to_string(s) +
             " on a worker that does not own it, or twice";
    if (tieOf[s] >= 0 && !tiedDone[tieOf[s]])
      return "optimizer step of tied stage " + std::to_string(s) +
             " before its tied reduction";
    stepped[s] = 1;
    return "";
  }

  std::string checkTiedReduction(int32_t w, size_t i, const TiedReduction &t) {
    if (!std::binary_search(t.members.begin(), t.members.end(), w) ||
        tiedDone[t.tie])
      return "tied reduction " + std::to_string(t.tie) +
             " on a worker that is not a member, or twice";
    // (A step of its stages before it failed above: a stage has one tie,
    // and its step needs the tie's reduction done.)
    tiedDone[t.tie] = 1;
    if (t.members.size() > 1) {
      ProgramStep &step = stepOf(w, i);
      step.kind = ProgramStep::Collective;
      step.members = t.members;
      step.payload = Payload{PayloadKind::Tied, t.tie, 0, 0, t.bytes, -1};
    }
    return "";
  }

  const CommPlan &plan;
  const CommProblem &p;
  std::vector<char> jobSeen;
  std::vector<uint8_t> messageEnds; // 1: sent, 2: received
  std::vector<int64_t> tieOf;       // per stage: its tie (-1: none)
  std::vector<RankProgram> ranks;
  // Outputs held on the worker being checked (jobs run there, messages
  // received there): heldOn[j] == w. One array for all workers, not one
  // per worker: O(J + ops), not O(W J).
  std::vector<int32_t> heldOn;
  // The worker being checked: per stage, a fetched copy and a step done;
  // per tie, reduced here; its last job's position; whether the op is in
  // the previous op's group.
  std::vector<char> fetched, stepped, tiedDone;
  int64_t lastPosition = -1;
  bool sameGroup = false;
};
} // namespace

std::string CommPlan::verify(const CommProblem &p) const {
  const int32_t W = p.numWorkers;
  if (programs.size() != size_t(W) || owns.size() != size_t(W))
    return "the plan has " + std::to_string(programs.size()) +
           " programs for " + std::to_string(W) + " workers";
  PlanChecker checker(*this, p);
  for (int32_t w = 0; w < W; ++w)
    if (std::string error = checker.checkWorker(w); !error.empty())
      return error;
  return checker.finish();
}

Traffic pipesched::scheduling::accountTraffic(const CommProblem &p,
                                              const CommPlan &plan,
                                              const std::vector<int64_t> &nodeOf) {
  const size_t W = size_t(p.numWorkers);
  std::vector<int64_t> zeros(W, 0);
  Traffic t{zeros, zeros, zeros, zeros, zeros,
            zeros, zeros, zeros, zeros, zeros};
  // A tied reduction is an all-reduce of the tensor over its members.
  for (const TiedReduction &r : plan.tied) {
    if (r.members.size() < 2)
      continue;
    for (int32_t m : r.members) {
      ++t.tiedReductions[m];
      t.tiedBytes[m] = saturatingAdd(t.tiedBytes[m], r.bytes);
      t.sentBytes[m] = saturatingAdd(t.sentBytes[m], r.bytes);
      t.receivedBytes[m] = saturatingAdd(t.receivedBytes[m], r.bytes);
    }
  }
  for (const Message &m : plan.messages) {
    t.sentBytes[m.sender] = saturatingAdd(t.sentBytes[m.sender], m.bytes);
    t.receivedBytes[m.receiver] =
        saturatingAdd(t.receivedBytes[m.receiver], m.bytes);
    if (!nodeOf.empty() && nodeOf[size_t(m.sender)] != nodeOf[size_t(m.receiver)]) {
      ++t.interNodeReceived[m.receiver];
      t.interNodeBytes[m.receiver] =
          saturatingAdd(t.interNodeBytes[m.receiver], m.bytes);
    }
    switch (m.kind) {
    case Message::Activation: ++t.activationsReceived[m.receiver]; break;
    case Message::Gradient: ++t.gradientsReceived[m.receiver]; break;
    case Message::Weights: ++t.weightFetches[m.receiver]; break;
    case Message::Scan: ++t.scanReceived[m.receiver]; break;
    default: break; // a message carries none of the collectives' kinds
    }
  }
  for (const Reduction &r : plan.reductions) {
    if (r.members.size() < 2)
      continue;
    for (int32_t m : r.members) {
      bool root = !r.isAllReduce() && m == r.owners.front();
      if (r.isAllReduce() || !root)
        t.sentBytes[m] = saturatingAdd(t.sentBytes[m], r.bytes);
      if (r.isAllReduce())
        t.receivedBytes[m] = saturatingAdd(t.receivedBytes[m], r.bytes);
      else if (root)
        t.receivedBytes[m] = saturatingAdd(
            t.receivedBytes[m],
            saturatingMul(r.bytes, int64_t(r.members.size() - 1)));
    }
  }
  return t;
}
