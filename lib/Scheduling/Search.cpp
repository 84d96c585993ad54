//===- Search.cpp - schedule search with a certificate ----------------------===//

#include "pipesched/Scheduling/Search.h"

#include "pipesched/Scheduling/Priorities.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace pipesched::scheduling {

using Wide = __int128;

int64_t SearchProblem::duration(int64_t stage, Direction d) const {
  switch (d) {
  case Direction::Forward:
    return forward[size_t(stage)];
  case Direction::Backward:
    return backward[size_t(stage)];
  case Direction::BackwardWeight:
    return isSplit() ? weight[size_t(stage)] : 0;
  case Direction::Scan:
    return 0;
  }
  return 0;
}

std::vector<std::vector<int64_t>> SearchProblem::stageSuccs() const {
  std::vector<std::vector<int64_t>> succs;
  succs.resize(size_t(stages));
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t p : stagePreds[size_t(s)])
      succs[size_t(p)].push_back(s);
  return succs;
}

std::string SearchProblem::check() const {
  if (stages < 1 || microbatches < 1 || workers < 1)
    return "stages, microbatches and workers must be positive";
  auto perStage = [&](const std::vector<int64_t> &v, const char *name,
                      bool optional) -> std::string {
    if (optional && v.empty())
      return "";
    if (int64_t(v.size()) != stages)
      return std::string(name) + " needs one duration per stage";
    for (int64_t x : v)
      if (x < 0)
        return std::string(name) + " durations must not be negative";
    return "";
  };
  for (std::string error : {perStage(forward, "forward", false),
                            perStage(backward, "backward", false),
                            perStage(weight, "weight-gradient", true)})
    if (!error.empty())
      return error;
  if (int64_t(stagePreds.size()) != stages)
    return "the stage graph needs a list of predecessors per stage";
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t p : stagePreds[size_t(s)])
      if (p < 0 || p >= s)
        return "stage " + std::to_string(s) + " is fed by stage " +
               std::to_string(p) + ": edges go from lower to higher stages";
  if (!(overlapRatio > 0 && overlapRatio <= 1))
    return "the overlap ratio must be in (0, 1]";
  if (memoryLimit == 0)
    return "a memory limit of 0 activations admits no forward";
  // S * B * 3 jobs fit comfortably in int64 for any verified step; the
  // bounds below sum durations in 128 bits.
  if (Wide(stages) * microbatches * jobsPerPair() >
      Wide(std::numeric_limits<int64_t>::max()))
    return "too many jobs";
  return "";
}

/// ceil(numerator * ratio / denominator), never above the exact value when
/// ratio < 1 introduces rounding (a bound must stay a bound).
static int64_t scaledCeil(Wide numerator, Wide denominator, double ratio) {
  Wide limit = std::numeric_limits<int64_t>::max();
  if (ratio >= 1) {
    Wide q = (numerator + denominator - 1) / denominator;
    return int64_t(std::min(q, limit));
  }
  long double x = (long double)numerator * ratio / (long double)denominator;
  long double c = std::ceil(x * (1 - 1e-12L));
  return c >= (long double)limit ? int64_t(limit) : int64_t(c);
}

int64_t LowerBound::value() const {
  return std::max({criticalPath, work, memoryTime});
}

const char *LowerBound::binding() const {
  int64_t v = value();
  if (criticalPath == v)
    return "critical path";
  if (work == v)
    return "work / W";
  return "memory-time";
}

namespace {
/// Per stage: the longest path (sum of durations) of one microbatch's jobs
/// ending at its forward, its backward and its weight half (inclusive).
struct SweepPaths {
  std::vector<Wide> forwardHead, backwardHead, weightHead;
};
} // namespace

/// The longest chains of one microbatch's sweep ending at each job
/// (inclusive), from any first forward.
static SweepPaths sweepHeads(const SearchProblem &p) {
  size_t S = size_t(p.stages);
  std::vector<std::vector<int64_t>> succs = p.stageSuccs();
  SweepPaths paths;
  paths.forwardHead.assign(S, 0);
  paths.backwardHead.assign(S, 0);
  paths.weightHead.assign(S, 0);
  for (size_t s = 0; s < S; ++s) {
    Wide before = 0;
    for (int64_t q : p.stagePreds[s])
      before = std::max(before, paths.forwardHead[size_t(q)]);
    paths.forwardHead[s] = before + p.forward[s];
  }
  for (size_t s = S; s-- > 0;) {
    // B(s) reads the gradients of its successors (its own output at a
    // last stage) and the activations of its predecessors.
    Wide before = succs[s].empty() ? paths.forwardHead[s] : 0;
    for (int64_t t : succs[s])
      before = std::max(before, paths.backwardHead[size_t(t)]);
    for (int64_t q : p.stagePreds[s])
      before = std::max(before, paths.forwardHead[size_t(q)]);
    paths.backwardHead[s] = before + p.backward[s];
    paths.weightHead[s] =
        paths.backwardHead[s] + p.duration(int64_t(s), Direction::BackwardWeight);
  }
  return paths;
}

std::vector<int64_t> activationLifetimes(const SearchProblem &p) {
  // life(s): the longest path from F(s) to the job that frees its
  // activation. Paths from F(s) forward are computed per source stage;
  // O(S * (S + E)), fine for the stage counts a step has (the verifier
  // bounds S * B); a chain takes the closed form in O(S).
  size_t S = size_t(p.stages);
  std::vector<std::vector<int64_t>> succs = p.stageSuccs();
  bool chain = true;
  for (size_t s = 0; s < S; ++s)
    chain &= s == 0 ? p.stagePreds[s].empty()
                    : p.stagePreds[s] == std::vector<int64_t>{int64_t(s) - 1};
  std::vector<int64_t> life(S, 0);
  auto release = [&](size_t s) {
    return p.backward[s] + p.duration(int64_t(s), Direction::BackwardWeight);
  };
  if (!chain && p.stages > kMaxExactLifetimeStages) {
    for (size_t s = 0; s < S; ++s)
      life[s] = int64_t(std::min<Wide>(Wide(p.forward[s]) + release(s),
                                       std::numeric_limits<int64_t>::max()));
    return life;
  }
  if (chain) {
    // F(s) .. F(S-1), B(S-1) .. B(s+1), then B(s) (and W(s)).
    Wide tail = 0; // sum over t > s of F(t) + B(t)
    for (size_t s = S; s-- > 0;) {
      Wide v = Wide(p.forward[s]) + tail + release(s);
      life[s] = int64_t(std::min<Wide>(v, std::numeric_limits<int64_t>::max()));
      tail += Wide(p.forward[s]) + p.backward[s];
    }
    return life;
  }
  std::vector<Wide> fwd(S), bwd(S);
  for (size_t src = 0; src < S; ++src) {
    const Wide none = -1;
    std::fill(fwd.begin(), fwd.end(), none);
    std::fill(bwd.begin(), bwd.end(), none);
    fwd[src] = p.forward[src];
    for (size_t s = src + 1; s < S; ++s)
      for (int64_t q : p.stagePreds[s])
        if (fwd[size_t(q)] >= 0)
          fwd[s] = std::max(fwd[s], fwd[size_t(q)] + p.forward[s]);
    for (size_t s = S; s-- > 0;) {
      Wide before = none;
      if (succs[s].empty())
        before = fwd[s];
      for (int64_t t : succs[s])
        before = std::max(before, bwd[size_t(t)]);
      for (int64_t q : p.stagePreds[s])
        before = std::max(before, fwd[size_t(q)]);
      if (before >= 0)
        bwd[s] = before + p.backward[s];
    }
    Wide v = bwd[src] + p.duration(int64_t(src), Direction::BackwardWeight);
    life[src] = int64_t(std::min<Wide>(v, std::numeric_limits<int64_t>::max()));
  }
  return life;
}

/// The least duration of a forward and of a job that frees an activation
/// (the backward, or its weight half when split).
static std::pair<Wide, Wide> leastForwardAndRelease(const SearchProblem &p) {
  Wide f = std::numeric_limits<int64_t>::max(), r = f;
  for (int64_t s = 0; s < p.stages; ++s) {
    f = std::min<Wide>(f, p.forward[size_t(s)]);
    r = std::min<Wide>(r, p.isSplit() ? p.weight[size_t(s)]
                                      : p.backward[size_t(s)]);
  }
  return {f, r};
}

/// Little's law: the activation-time B * sum_s life(s) fits in L * W * M.
/// Not all of it is usable: by tick t a worker has started at most
/// floor(t / f) + 1 forwards (f the least forward), and the activations
/// live in the last tau ticks are freed by jobs ending in them, at most
/// ceil(tau / r) per worker (r the least freeing job). The two ramps waste
/// (f + r) * W * M(M - 1)/2 of the room when they do not overlap, which
/// holds once `known` (a bound already proven) is at least (M - 1)(f + r).
static int64_t memoryTimeBound(const SearchProblem &p, int64_t known) {
  Wide lives = 0;
  for (int64_t life : activationLifetimes(p))
    lives += life;
  lives *= p.microbatches;
  Wide M = p.memoryLimit, room = Wide(p.workers) * M;
  int64_t plain = scaledCeil(lives, room, p.overlapRatio);
  if (p.overlapRatio < 1)
    return plain;
  auto [f, r] = leastForwardAndRelease(p);
  if ((long double)(f + r) * p.workers * (long double)M * M > 1e36L)
    return plain; // past any step a worker's memory holds
  if (std::max<Wide>(known, plain) < (M - 1) * (f + r))
    return plain; // a shorter step would make the ramps overlap
  Wide ramps = (f + r) * p.workers * (M * (M - 1) / 2);
  Wide withRamps = (lives + ramps + room - 1) / room;
  if (withRamps > std::numeric_limits<int64_t>::max())
    return plain;
  return std::max(plain, int64_t(withRamps));
}

LowerBound computeLowerBound(const SearchProblem &p) {
  LowerBound bound;
  SweepPaths paths = sweepHeads(p);
  Wide path = 0, sweep = 0;
  for (size_t s = 0; s < size_t(p.stages); ++s) {
    path = std::max({path, paths.backwardHead[s], paths.weightHead[s]});
    sweep += Wide(p.forward[s]) + p.backward[s] +
             p.duration(int64_t(s), Direction::BackwardWeight);
  }
  bound.criticalPath = scaledCeil(path, 1, p.overlapRatio);
  bound.work = scaledCeil(sweep * p.microbatches, p.workers, p.overlapRatio);
  if (p.memoryLimit > 0)
    bound.memoryTime =
        memoryTimeBound(p, std::max(bound.criticalPath, bound.work));
  return bound;
}

int64_t candidateBound(const SearchProblem &p, const LowerBound &global,
                       const std::vector<int64_t> &life,
                       const std::vector<int32_t> &workerOf) {
  size_t W = size_t(p.workers);
  std::vector<Wide> busy(W, 0), held(W, 0);
  int64_t perPair = p.jobsPerPair();
  for (int64_t s = 0; s < p.stages; ++s)
    for (int64_t b = 0; b < p.microbatches; ++b)
      for (int64_t d = 0; d < perPair; ++d) {
        JobCoord job{s, b, Direction(d)};
        int32_t w = workerOf[size_t(jobCoordIndex(p.microbatches, perPair, job))];
        if (w < 0 || size_t(w) >= W)
          continue; // the evaluator reports it
        busy[size_t(w)] += p.duration(s, Direction(d));
        if (d == 0 && p.memoryLimit > 0)
          held[size_t(w)] += life[size_t(s)];
      }
  int64_t bound = global.value();
  for (size_t w = 0; w < W; ++w) {
    bound = std::max(bound, scaledCeil(busy[w], 1, p.overlapRatio));
    if (p.memoryLimit > 0)
      bound = std::max(bound,
                       scaledCeil(held[w], p.memoryLimit, p.overlapRatio));
  }
  return bound;
}

/// Whether candidate a ranks before b.
static bool ranksBefore(const std::vector<CandidateResult> &r, size_t a,
                        size_t b) {
  return std::tie(r[a].latency, r[a].peak, a) <
         std::tie(r[b].latency, r[b].peak, b);
}

/// The ranked candidate that `i` repeats (same family, latency and peak).
static std::vector<size_t>::const_iterator
findDuplicate(const std::vector<size_t> &ranked,
              const std::vector<CandidateResult> &r,
              const std::vector<uint32_t> &family, size_t i) {
  return std::find_if(ranked.begin(), ranked.end(), [&](size_t k) {
    return k != i && family[k] == family[i] && r[k].latency == r[i].latency &&
           r[k].peak == r[i].peak && r[k].peakBytes == r[i].peakBytes;
  });
}

SearchOutcome runSearch(const SearchProblem &problem,
                        const std::vector<int64_t> &bounds,
                        const std::vector<uint32_t> &family, size_t top,
                        size_t batchSize, const EvaluateBatch &evaluate) {
  SearchOutcome outcome;
  outcome.bound = computeLowerBound(problem);
  size_t n = bounds.size();
  outcome.results.resize(n);
  for (size_t i = 0; i < n; ++i)
    outcome.results[i].bound = bounds[i];
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bounds[a] < bounds[b]; });
  top = std::max<size_t>(top, 1);
  batchSize = std::max<size_t>(batchSize, 1);

  // The `top` best fitting candidates so far, best first.
  std::vector<size_t> &best = outcome.ranking;
  auto threshold = [&]() {
    return best.size() < top ? std::numeric_limits<int64_t>::max()
                             : outcome.results[best.back()].latency;
  };
  size_t next = 0;
  std::vector<size_t> batch;
  while (next < n) {
    // A batch of candidates whose bounds do not exceed the threshold.
    batch.clear();
    int64_t limit = threshold();
    while (next < n && batch.size() < batchSize && bounds[order[next]] <= limit)
      batch.push_back(order[next++]);
    if (batch.empty())
      break;
    evaluate(batch, outcome.results);
    for (size_t i : batch) {
      CandidateResult &r = outcome.results[i];
      r.evaluated = true;
      ++outcome.evaluated;
      if (!r.simulated) {
        ++outcome.failed;
        continue;
      }
      if (!r.fits(problem)) {
        ++outcome.overLimit;
        continue;
      }
      // Of two equal schedules of one family, the first candidate stays.
      if (auto dup = findDuplicate(best, outcome.results, family, i);
          dup != best.end()) {
        if (*dup < i)
          continue;
        best.erase(dup);
      }
      auto at = std::upper_bound(best.begin(), best.end(), i,
                                 [&](size_t a, size_t b) {
                                   return ranksBefore(outcome.results, a, b);
                                 });
      best.insert(at, i);
      if (best.size() > top)
        best.pop_back();
    }
  }
  outcome.pruned = int64_t(n) - outcome.evaluated;
  for (size_t i = 0; i < n; ++i)
    if (outcome.results[i].evaluated && outcome.results[i].fits(problem) &&
        findDuplicate(best, outcome.results, family, i) != best.end())
      ++outcome.duplicates;
  return outcome;
}

std::string verifySearch(const SearchProblem &problem,
                         const std::vector<uint32_t> &family, size_t top,
                         const SearchOutcome &outcome) {
  const std::vector<CandidateResult> &r = outcome.results;
  int64_t bound = outcome.bound.value();
  for (size_t k = 0; k < outcome.ranking.size(); ++k) {
    size_t i = outcome.ranking[k];
    if (i >= r.size() || !r[i].fits(problem))
      return "ranked candidate " + std::to_string(i) + " does not fit";
    if (r[i].latency < bound || r[i].latency < r[i].bound)
      return "candidate " + std::to_string(i) + " has latency " +
             std::to_string(r[i].latency) + " below its lower bound " +
             std::to_string(std::max(bound, r[i].bound));
    if (k > 0 && !ranksBefore(r, outcome.ranking[k - 1], i))
      return "the ranking is out of order at " + std::to_string(k);
  }
  // Every fitting evaluated candidate left out ranks after the last one.
  for (size_t i = 0; i < r.size(); ++i) {
    bool ranked = std::find(outcome.ranking.begin(), outcome.ranking.end(),
                            i) != outcome.ranking.end();
    if (ranked || (r[i].evaluated && r[i].fits(problem) &&
                   findDuplicate(outcome.ranking, r, family, i) !=
                       outcome.ranking.end()))
      continue;
    if (r[i].evaluated && r[i].fits(problem) &&
        (outcome.ranking.size() < std::max<size_t>(top, 1) ||
         ranksBefore(r, i, outcome.ranking.back())))
      return "candidate " + std::to_string(i) + " should be ranked";
    if (!r[i].evaluated && outcome.ranking.size() >= std::max<size_t>(top, 1) &&
        r[i].bound <= r[outcome.ranking.back()].latency)
      return "candidate " + std::to_string(i) +
             " was skipped although its bound does not exceed the ranked "
             "latencies";
    if (!r[i].evaluated && outcome.ranking.size() < std::max<size_t>(top, 1))
      return "candidate " + std::to_string(i) +
             " was skipped before the ranking was full";
  }
  return "";
}

} // namespace pipesched::scheduling
