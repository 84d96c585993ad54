//===- Search.h - schedule search with a certificate ------------*- C++ -*-===//
//
// Dialect-free. A search problem is a step's shape (S stages, B microbatches,
// W workers, the stage graph), its durations and a per-worker memory limit;
// the candidates are schedules (the dialect enumerates them: strategies,
// parameters, priorities, caps) that an evaluator simulates.
//
// Lower bounds. Every schedule of the problem, on any placement and in any
// order, has a latency of at least
//  - the critical path: one microbatch's forward and backward sweep;
//  - the work bound: all job time divided over the W workers;
//  - the memory-time bound (Little's law): the activation of stage s on
//    microbatch b is live from its forward's start to its backward's end,
//    at least life(s) = the longest path from F(s) through B(s) (and its
//    weight half); a worker holds at most M at once, so
//    L * W * M >= B * sum_s life(s), less the room the ramps waste (a
//    worker starts one forward at a time and ends one freeing job at a
//    time). The seed's theorem rho <= M/S is this
//    bound with every life(s) taken as S units, which overstates the
//    lifetimes of the later stages (docs/search.md).
// A candidate's own bound adds what its placement fixes: its busiest
// worker, and the memory-time bound per worker over the forwards it holds.
//
// Search. Candidates are evaluated in increasing order of their bounds and
// the rest skipped once a bound exceeds the K-th best latency found (branch
// and bound): the best K are exact, ties included.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_SEARCH_H
#define PIPESCHED_SCHEDULING_SEARCH_H

#include "pipesched/Scheduling/Direction.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pipesched::scheduling {

struct SearchProblem {
  int64_t stages = 1, microbatches = 1, workers = 1;
  /// Per stage: forward, backward (its input half when split) and weight
  /// half (empty when the backward is not split).
  std::vector<int64_t> forward, backward, weight;
  /// Per stage: the stages whose forwards feed it (the chain: s - 1).
  std::vector<std::vector<int64_t>> stagePreds;
  /// The least fraction of its members' total time an overlapped
  /// forward-backward pair takes (the cost's fwd_bwd over F + B + W; 1 when
  /// pairs save nothing): bounds scale every duration by it.
  double overlapRatio = 1.0;
  /// Activations a worker may keep live at once; < 0: no limit.
  int64_t memoryLimit = -1;
  /// Bytes a worker may hold (activations at `actBytes` each and the
  /// weights it owns or fetches); < 0: no limit. With it, `memoryLimit` is
  /// the activations the bytes would hold without weights (for the bounds).
  int64_t memoryLimitBytes = -1;
  int64_t actBytes = 0, weightBytes = 0;

  bool isSplit() const { return !weight.empty(); }
  int64_t jobsPerPair() const { return isSplit() ? 3 : 2; }
  int64_t numJobs() const { return stages * microbatches * jobsPerPair(); }
  int64_t duration(int64_t stage, Direction d) const;
  /// The stages each stage feeds (the inverse of stagePreds).
  std::vector<std::vector<int64_t>> stageSuccs() const;
  /// "" or the first inconsistency (sizes, negative durations, a stage
  /// graph that is not acyclic with edges from lower to higher stages).
  std::string check() const;
};

/// The bounds of a problem, in ticks (rounded up).
struct LowerBound {
  int64_t criticalPath = 0, work = 0, memoryTime = 0;
  int64_t value() const;
  /// The name of the bound that binds ("critical path", "work / W" or
  /// "memory-time"), the first of equal ones.
  const char *binding() const;
};

/// The lifetime life(s) of each stage's activation, unscaled: F(s), the
/// longest path from it to B(s), B(s), and W(s) when split. O(S) on a
/// chain; O(S (S + E)) on a stage graph of up to kMaxExactLifetimeStages
/// stages, and past that the shorter F(s) + B(s) (+ W(s)), still a bound.
std::vector<int64_t> activationLifetimes(const SearchProblem &problem);
inline constexpr int64_t kMaxExactLifetimeStages = 2048;

/// The bounds that hold for every schedule of `problem`.
LowerBound computeLowerBound(const SearchProblem &problem);

/// A candidate's bound: the problem's, its busiest worker, and the
/// memory-time bound of each worker over the forwards placed on it.
/// `workerOf` holds the compute worker of every job by jobCoordIndex;
/// `lifetimes` are activationLifetimes(problem), computed once.
int64_t candidateBound(const SearchProblem &problem,
                       const LowerBound &global,
                       const std::vector<int64_t> &lifetimes,
                       const std::vector<int32_t> &workerOf);

/// What evaluating one candidate gave.
struct CandidateResult {
  int64_t bound = 0;
  bool evaluated = false;
  /// Simulated to completion (false: refused or stuck; see error).
  bool simulated = false;
  int64_t latency = 0;
  /// Peak live activations of the fullest worker.
  int64_t peak = 0;
  /// Peak bytes of the fullest worker: activations and weights held.
  int64_t peakBytes = 0;
  std::string error;
  /// Simulated and within the memory limit.
  bool fits(const SearchProblem &problem) const {
    if (!simulated)
      return false;
    if (problem.memoryLimitBytes >= 0)
      return peakBytes <= problem.memoryLimitBytes;
    return problem.memoryLimit < 0 || peak <= problem.memoryLimit;
  }
};

struct SearchOutcome {
  LowerBound bound;
  std::vector<CandidateResult> results; ///< per candidate
  /// The best candidates that fit, best first: by latency, then peak
  /// memory, then candidate index. At most `top` entries.
  std::vector<size_t> ranking;
  int64_t evaluated = 0, pruned = 0, failed = 0, overLimit = 0;
  /// Candidates not ranked because a ranked one of the same family has the
  /// same latency and peak (the same schedule under another name).
  int64_t duplicates = 0;
};

/// Evaluates the given candidates (indices), filling their results; may
/// run them in parallel. Entries arrive with `bound` set.
using EvaluateBatch = std::function<void(const std::vector<size_t> &batch,
                                         std::vector<CandidateResult> &results)>;

/// Branch and bound over candidates with the given bounds: evaluates them
/// in increasing bound order (ties: by index), `batchSize` at a time, and
/// stops once a bound exceeds the `top`-th best fitting latency. A
/// candidate whose `family` (any grouping: the dialect uses the strategy)
/// matches a ranked one of equal latency and peak is not ranked beside it.
/// The outcome does not depend on how a batch is evaluated.
SearchOutcome runSearch(const SearchProblem &problem,
                        const std::vector<int64_t> &bounds,
                        const std::vector<uint32_t> &family, size_t top,
                        size_t batchSize, const EvaluateBatch &evaluate);

/// Checks an outcome: the ranking holds fitting, simulated candidates in
/// order, no ranked latency is below the problem's bound, and every
/// candidate left unevaluated has a bound above the last ranked latency
/// (when `top` were ranked). Returns "" or the first violation.
std::string verifySearch(const SearchProblem &problem,
                         const std::vector<uint32_t> &family, size_t top,
                         const SearchOutcome &outcome);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_SEARCH_H
