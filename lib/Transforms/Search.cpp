//===- Search.cpp - find the fastest schedule of a step spec --------------===//
//
// A thin adapter: spec -> SearchProblem and candidates (SearchSpace) ->
// branch and bound (lib/Scheduling/Search) -> the best candidate written
// into the spec, and the ranking and certificate printed.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/ExactSchedule.h"
#include "pipesched/Scheduling/MemoryAwareSchedule.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/SearchSpace.h"
#include "pipesched/Transforms/StepPhases.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <mutex>

namespace pipesched {
#define GEN_PASS_DEF_SCHEDSEARCH
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sim = pipesched::scheduling;

/// The file name of every candidate's location: its line is the
/// candidate's index, so captured diagnostics find their candidate.
static constexpr llvm::StringLiteral kCandidateFile = "sched-search candidate";
/// Candidates simulated at a time; fixed, so that what is skipped does not
/// depend on the thread count.
static constexpr size_t kBatch = 8;
/// The exact solver is exponential: steps of more jobs are not tried.
static constexpr int64_t kExactMaxJobs = 40;
/// Runners-up ranked at most (the ranking is kept sorted by insertion).
static constexpr int64_t kMaxTop = 1000;
/// Jobs the memory-aware list scheduler's local search schedules at most
/// (about a microsecond each): big steps try fewer than `list-search`
/// schedules.
static constexpr int64_t kListSearchJobs = int64_t(1) << 21;
/// Prefetch depths a search replays at most.
static constexpr size_t kMaxReplayDepths = 4;

namespace {
/// What one spec's search found, for printing.
struct SearchReport {
  int64_t stages = 0, microbatches = 0, workers = 0;
  /// The limit in activations, and in bytes when given so (else -1).
  int64_t memoryLimit = -1, memoryLimitBytes = -1;
  /// What was searched (shape, durations, limits): what `fits` judges by.
  sim::SearchProblem problem;
  std::vector<SearchCandidate> candidates;
  sim::SearchOutcome outcome;
  /// The named strategies (own priority and cap), by candidate index.
  std::vector<size_t> named;
  double seconds = 0;
  std::optional<sim::ExactResult> exact;
  std::string exactSkipped;
  /// The best schedule placed job by job (list scheduling or the exact
  /// solver's), simulated as the step would be; `jobByJob` says whether the
  /// step became it (it beat every candidate).
  std::optional<sim::CandidateResult> placed;
  const char *placedBy = "";
  bool jobByJob = false;
  /// With replay-prefetch: the ranked candidates by their fastest replay
  /// (then latency, then the ranking), each one's replayed ticks (-1: its
  /// lowering failed) and the prefetch depth that gave them.
  std::vector<size_t> order;
  llvm::DenseMap<size_t, std::pair<int64_t, int64_t>> replayed;

  /// The candidates in the order shown and chosen from.
  const std::vector<size_t> &shown() const {
    return order.empty() ? outcome.ranking : order;
  }
  size_t best() const { return shown().front(); }
  /// The latency of what the step became.
  int64_t bestLatency() const {
    return jobByJob ? placed->latency : outcome.results[best()].latency;
  }
  /// What the choice minimizes: the replay, or the simulated latency.
  int64_t objective(size_t i) const {
    if (auto it = replayed.find(i); it != replayed.end())
      return it->second.first < 0 ? INT64_MAX : it->second.first;
    return outcome.results[i].latency;
  }
};

/// One stage count of a search over stage counts.
struct StageTrial {
  int64_t stages = 0;
  OwningOpRef<ModuleOp> scratch; ///< holds the partitioned spec
  StepOp spec;
  std::optional<SearchReport> report;
  std::string error;
  int64_t latency() const {
    return report->jobByJob ? report->bestLatency()
                            : report->objective(report->best());
  }
};

struct SchedSearch : pipesched::impl::SchedSearchBase<SchedSearch> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<SearchReport> search(StepOp spec);
  FailureOr<int64_t> checkOptions(StepOp spec, SearchReport &report);
  LogicalResult checkWork(StepOp spec, const SearchReport &report, int64_t jobs);
  void evaluateAll(StepOp spec, const sim::SearchProblem &problem,
                   SearchReport &report, const std::vector<uint32_t> &family,
                   const std::vector<int64_t> &bounds,
                   const std::vector<std::vector<int64_t>> &held);
  /// Below `upperBound`: one more than the best schedule found.
  void solveExactly(StepOp spec, const sim::SearchProblem &problem,
                    int64_t upperBound, SearchReport &report);
  /// Under a limit in activations: list scheduling with local search (and
  /// the exact solver's schedule), which the step becomes if it is faster.
  void placeJobByJob(StepOp spec, const sim::SearchProblem &problem,
                     sim::ExplicitSchedule listed, SearchReport &report);
  /// Under a limit in activations (no pairs), the memory-aware list
  /// scheduler's best schedule; else none.
  sim::ExplicitSchedule listScheduleJobByJob(StepOp spec,
                                             const sim::SearchProblem &problem);
  /// The list schedules to try on a step of `jobs` jobs: `list-search`, or
  /// fewer on a big step (kListSearchJobs jobs scheduled in all).
  int64_t listSchedules(int64_t jobs) const;
  /// Replays the ranked candidates at each replay-prefetch depth and orders
  /// them by the fastest replay.
  void replayRanked(StepOp spec, SearchReport &report);
  /// Candidate jobs the search of the current spec has committed to
  /// (max-work bounds their sum over a search's stage counts).
  int64_t workSpent = 0;
  /// With `layers`: the search over stage counts; prints or collects its
  /// reports like search() and rewrites `spec` into the best.
  LogicalResult searchStages(StepOp spec, llvm::json::Array &steps);
  void tryStageCount(StepOp spec, const LayerFile &file, int64_t S,
                     StageTrial &trial);
  void printStageCounts(StepOp spec, const LayerFile &file,
                        std::vector<StageTrial> &trials, const StageTrial *best,
                        llvm::json::Array &steps);
  void emitReport(const SearchReport &report, llvm::json::Array &steps);
};
} // namespace

static std::string candidateText(const SearchCandidate &c) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printCandidate(os, c);
  return text;
}

/// What the step became: the best candidate's syntax, or the schedule
/// placed job by job.
static std::string chosenText(const SearchReport &r) {
  if (r.jobByJob)
    return std::string("placed job by job (") + r.placedBy + ")";
  return candidateText(r.candidates[r.best()]);
}

static double gapOf(int64_t latency, int64_t bound) {
  return bound > 0 ? double(latency - bound) / double(bound) : 0.0;
}

/// The fitting named strategy of least latency, if any.
static std::optional<size_t> bestNamed(const SearchReport &r) {
  std::optional<size_t> best;
  for (size_t i : r.named) {
    const sim::CandidateResult &c = r.outcome.results[i];
    if (c.fits(r.problem) &&
        (!best || c.latency < r.outcome.results[*best].latency))
      best = i;
  }
  return best;
}

/// The options against each other and the spec; the limit in activations
/// per worker (-1: none), with both limits recorded in the report.
FailureOr<int64_t> SchedSearch::checkOptions(StepOp spec, SearchReport &report) {
  if (memoryLimit < 0 || memoryLimitBytes < 0 || top < 1 || top > kMaxTop ||
      exactNodes < 1 || maxJobs < 1 || maxWork < 1 || listSearch < 0)
    return spec.emitOpError()
           << "--sched-search needs memory limits >= 0, top in [1, " << kMaxTop
           << "], exact-nodes, max-jobs and max-work >= 1 and list-search "
              ">= 0";
  if (memoryLimit > 0 && memoryLimitBytes > 0)
    return spec.emitOpError(
        "--sched-search takes memory-limit or memory-limit-bytes, not both");
  if (replayPrefetch.size() > kMaxReplayDepths ||
      llvm::any_of(replayPrefetch, [](int64_t d) { return d < 0 || d > 64; }))
    return spec.emitOpError()
           << "--sched-search replays at most " << kMaxReplayDepths
           << " prefetch depths, each in [0, 64]";
  int64_t limit = memoryLimit > 0 ? int64_t(memoryLimit) : -1;
  if (memoryLimitBytes > 0) {
    int64_t act = spec.getCostOrDefault().getActBytes();
    if (act <= 0)
      return spec.emitOpError(
          "memory-limit-bytes needs the cost's 'act' size");
    limit = memoryLimitBytes / act;
    if (limit == 0)
      return spec.emitOpError()
             << "memory-limit-bytes = " << int64_t(memoryLimitBytes)
             << " holds no activation of act = " << act << " bytes";
  }
  report.memoryLimit = limit;
  report.memoryLimitBytes = memoryLimitBytes > 0 ? int64_t(memoryLimitBytes) : -1;

  return limit;
}

/// Refused up front rather than simulated for minutes: the candidates'
/// jobs, all of which the search may simulate (over every stage count of a
/// search over stage counts); a replay lowers a candidate, counted as a
/// simulation per depth.
LogicalResult SchedSearch::checkWork(StepOp spec, const SearchReport &report,
                                     int64_t jobs) {
  int64_t replays = int64_t(replayPrefetch.size()) * int64_t(top);
  int64_t listed = report.memoryLimit > 0 && report.memoryLimitBytes < 0 &&
                           listSearch > 0
                       ? listSchedules(jobs)
                       : 0;
  int64_t work = (int64_t(report.candidates.size()) + replays + listed) * jobs;
  if (work > maxWork - workSpent)
    return spec.emitOpError()
           << "would simulate up to " << report.candidates.size()
           << " candidates"
           << (listed ? " and " + std::to_string(listed) + " list schedules"
                      : "")
           << " of " << jobs << " jobs (" << work
           << " jobs), more than max-work = " << int64_t(maxWork)
           << (workSpent ? " leaves after the stage counts before" : "")
           << " (--sched-search=max-work=N raises the limit)";
  workSpent += work;
  return success();
}

/// A family per placement (a strategy or a map): equal schedules of one
/// family rank once, and what the placement fixes (a bound, the weights
/// each worker holds) is computed once per family. Fills each candidate's
/// family and bound, and each family's held weights.
static void groupFamilies(StepOp spec, const sim::SearchProblem &problem,
                          SearchReport &report, std::vector<uint32_t> &family,
                          std::vector<int64_t> &bounds,
                          std::vector<std::vector<int64_t>> &held) {
  std::vector<size_t> firstOf; // a candidate of each family
  llvm::DenseMap<Attribute, uint32_t> familyOf;
  for (auto [i, c] : llvm::enumerate(report.candidates)) {
    auto [it, added] = familyOf.try_emplace(c.family(), uint32_t(firstOf.size()));
    if (added)
      firstOf.push_back(i);
    family.push_back(it->second);
  }
  sim::LowerBound global = sim::computeLowerBound(problem);
  std::vector<int64_t> lifetimes = sim::activationLifetimes(problem);
  std::vector<int64_t> familyBound;
  for (size_t first : firstOf) {
    const SearchCandidate &c = report.candidates[first];
    familyBound.push_back(sim::candidateBound(problem, global, lifetimes,
                                              candidateWorkers(spec, c)));
    held.push_back(heldWeightBytes(spec, c));
  }
  bounds.reserve(report.candidates.size());
  for (auto [i, c] : llvm::enumerate(report.candidates)) {
    // Named strategies are always simulated (by their bound's place in the
    // order), so that the report can compare the best with them.
    bool isNamed = c.strategy && !c.priority && !c.cap;
    if (isNamed)
      report.named.push_back(i);
    bounds.push_back(isNamed ? global.value() : familyBound[family[i]]);
  }

}

/// Simulates the candidates in batches, best bound first, in parallel;
/// the phases' diagnostics on candidates are captured, not reported.
void SchedSearch::evaluateAll(StepOp spec, const sim::SearchProblem &problem,
                              SearchReport &report,
                              const std::vector<uint32_t> &family,
                              const std::vector<int64_t> &bounds,
                              const std::vector<std::vector<int64_t>> &held) {
  MLIRContext *ctx = &getContext();
  std::vector<std::string> errors(report.candidates.size());
  std::mutex errorsMutex;
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
    auto loc = dyn_cast<FileLineColLoc>(diag.getLocation());
    if (!loc || loc.getFilename() != kCandidateFile)
      return failure();
    std::lock_guard<std::mutex> lock(errorsMutex);
    std::string &error = errors[loc.getLine()];
    if (error.empty())
      error = diag.str();
    return success();
  });
  auto evaluate = [&](const std::vector<size_t> &batch,
                      std::vector<sim::CandidateResult> &results) {
    parallelFor(ctx, 0, batch.size(), [&](size_t k) {
      size_t i = batch[k];
      Location loc = FileLineColLoc::get(ctx, kCandidateFile, unsigned(i), 0);
      sim::CandidateResult r = evaluateCandidate(
          spec, report.candidates[i], held[family[i]], loc, maxJobs);
      r.bound = results[i].bound;
      results[i] = std::move(r);
    });
    for (size_t i : batch)
      if (results[i].error.empty())
        results[i].error = errors[i];
  };
  report.outcome =
      sim::runSearch(problem, bounds, family, size_t(top), kBatch, evaluate);
}

/// No candidate fits the memory limit (or every one is stuck): says so,
/// with the one that came closest.
static LogicalResult explainNoSchedule(StepOp spec, const SearchReport &report,
                                       int64_t limit) {
  bool bytes = report.memoryLimitBytes >= 0;
  if (limit < 0)
    return spec.emitOpError()
           << "has no schedule: every one of its " << report.candidates.size()
           << " candidates is stuck";
  InFlightDiagnostic diag = spec.emitOpError()
                            << "has no schedule within the memory limit of "
                            << (bytes ? report.memoryLimitBytes : limit)
                            << (bytes ? " bytes" : " activations")
                            << " per worker";
  // The candidate that came closest.
  auto peakOf = [&](const sim::CandidateResult &r) {
    return bytes ? r.peakBytes : r.peak;
  };
  std::optional<size_t> closest;
  for (auto [i, r] : llvm::enumerate(report.outcome.results))
    if (r.simulated &&
        (!closest || peakOf(r) < peakOf(report.outcome.results[*closest])))
      closest = i;
  if (closest)
    diag.attachNote() << "the least peak is "
                      << peakOf(report.outcome.results[*closest])
                      << (bytes ? " bytes" : " activations") << ", by "
                      << candidateText(report.candidates[*closest]);
  return diag;
}

/// With `exact`: the exact solver on the search's problem, bounded by the
/// best candidate (or why it was skipped).
void SchedSearch::solveExactly(StepOp spec, const sim::SearchProblem &problem,
                               int64_t upperBound, SearchReport &report) {
  int64_t jobs = problem.numJobs();
  if (problem.overlapRatio < 1)
    report.exactSkipped = "overlapped pairs are not modelled";
  else if (problem.memoryLimitBytes >= 0)
    report.exactSkipped = "a limit in bytes (weights held) is not modelled";
  else if (spec.getNodesAttr())
    report.exactSkipped = "nodes (the link between them) are not modelled";
  else if (jobs > kExactMaxJobs)
    report.exactSkipped = llvm::formatv("{0} jobs, more than {1}", jobs,
                                        kExactMaxJobs);
  else
    report.exact = sim::solveExactly(problem,
                                     spec.getCostOrDefault().getTransfer(),
                                     upperBound, exactNodes);
}

void SchedSearch::placeJobByJob(StepOp spec, const sim::SearchProblem &problem,
                                sim::ExplicitSchedule best,
                                SearchReport &report) {
  if (!best.empty())
    report.placedBy = "memory-aware list scheduling";
  if (report.exact && !report.exact->schedule.empty() &&
      (best.empty() || report.exact->schedule.makespan < best.makespan)) {
    best = report.exact->schedule;
    report.placedBy = "the exact solver";
  }
  if (best.empty())
    return;
  Location loc = FileLineColLoc::get(&getContext(), kCandidateFile,
                                     unsigned(report.candidates.size()), 0);
  ScopedDiagnosticHandler quiet(&getContext(), [](Diagnostic &diag) {
    auto loc = dyn_cast<FileLineColLoc>(diag.getLocation());
    return success(loc && loc.getFilename() == kCandidateFile);
  });
  report.placed =
      sim::CandidateResult(evaluateExplicitSchedule(spec, problem, best, loc, maxJobs));
  report.jobByJob = report.placed->fits(problem) &&
                    (report.outcome.ranking.empty() ||
                     report.placed->latency < report.bestLatency());
  if (report.jobByJob)
    (void)applyExplicitSchedule(spec, problem, best, maxJobs);
}

FailureOr<SearchReport> SchedSearch::search(StepOp spec) {
  SearchReport report;
  report.stages = spec.getStages();
  report.microbatches = spec.getMicrobatches();
  report.workers = spec.getWorkers();
  FailureOr<int64_t> limit = checkOptions(spec, report);
  if (failed(limit))
    return failure();
  sim::SearchProblem problem = buildSearchProblem(spec);
  problem.memoryLimit = *limit;
  problem.memoryLimitBytes = report.memoryLimitBytes;
  if (std::string error = problem.check(); !error.empty())
    return spec.emitOpError() << "cannot be searched: " << error;
  report.problem = problem;
  int64_t jobs = problem.numJobs();
  if (jobs > maxJobs)
    return spec.emitOpError()
           << "has " << jobs << " jobs per candidate, more than max-jobs = "
           << int64_t(maxJobs) << " (--sched-search=max-jobs=N raises the limit)";

  auto start = std::chrono::steady_clock::now();
  report.candidates = enumerateCandidates(spec, problem);
  if (failed(checkWork(spec, report, jobs)))
    return failure();
  std::vector<uint32_t> family;
  std::vector<int64_t> bounds;
  std::vector<std::vector<int64_t>> held;
  groupFamilies(spec, problem, report, family, bounds, held);
  evaluateAll(spec, problem, report, family, bounds, held);
  report.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (std::string error =
          sim::verifySearch(problem, family, size_t(top), report.outcome);
      !error.empty())
    return spec.emitOpError() << "search result is invalid: " << error;
  // Under a limit in activations, a schedule placed job by job may beat
  // every candidate, or exist where none fits.
  sim::ExplicitSchedule listed = listScheduleJobByJob(spec, problem);
  int64_t found = INT64_MAX / 4;
  if (!report.outcome.ranking.empty())
    found = report.bestLatency();
  if (!listed.empty())
    found = std::min(found, listed.makespan);
  if (exact && found < INT64_MAX / 4)
    solveExactly(spec, problem, found + 1, report);
  if (!replayPrefetch.empty() && !report.outcome.ranking.empty())
    replayRanked(spec, report);
  else
    placeJobByJob(spec, problem, std::move(listed), report);
  if (report.jobByJob)
    return report;
  if (report.outcome.ranking.empty())
    return explainNoSchedule(spec, report, *limit);
  applyCandidate(spec, report.candidates[report.best()]);
  return report;
}

sim::ExplicitSchedule
SchedSearch::listScheduleJobByJob(StepOp spec,
                                  const sim::SearchProblem &problem) {
  if (problem.memoryLimit <= 0 || problem.memoryLimitBytes >= 0 ||
      problem.overlapRatio < 1 || listSearch == 0)
    return {};
  return sim::searchUnderMemory(problem, spec.getCostOrDefault().getTransfer(),
                                {listSchedules(problem.numJobs()), 1});
}

int64_t SchedSearch::listSchedules(int64_t jobs) const {
  return std::min<int64_t>(listSearch,
                           std::max<int64_t>(2, kListSearchJobs / jobs));
}

void SchedSearch::replayRanked(StepOp spec, SearchReport &report) {
  MLIRContext *ctx = &getContext();
  const std::vector<size_t> &ranked = report.outcome.ranking;
  SmallVector<int64_t> depths(replayPrefetch.begin(), replayPrefetch.end());
  // One replay per (candidate, depth), in parallel; a failed lowering's
  // diagnostics are dropped (the candidate ranks last, marked).
  std::vector<int64_t> ticks(ranked.size() * depths.size(), -1);
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &diag) {
    auto loc = dyn_cast<FileLineColLoc>(diag.getLocation());
    return success(loc && loc.getFilename() == kCandidateFile);
  });
  parallelFor(ctx, 0, ticks.size(), [&](size_t k) {
    size_t i = ranked[k / depths.size()];
    Location loc = FileLineColLoc::get(ctx, kCandidateFile, unsigned(i), 0);
    FailureOr<int64_t> t = replayCandidate(
        spec, report.candidates[i], loc, maxJobs, depths[k % depths.size()]);
    ticks[k] = succeeded(t) ? *t : -1;
  });
  for (auto [r, i] : llvm::enumerate(ranked)) {
    std::pair<int64_t, int64_t> best{-1, 0};
    for (auto [d, depth] : llvm::enumerate(depths)) {
      int64_t t = ticks[r * depths.size() + d];
      if (t >= 0 && (best.first < 0 || t < best.first))
        best = {t, depth};
    }
    report.replayed[i] = best;
  }
  report.order = ranked;
  std::stable_sort(report.order.begin(), report.order.end(),
                   [&](size_t a, size_t b) {
                     return report.objective(a) < report.objective(b);
                   });
}

/// The schedule placed job by job, and whether the step became it.
static void printPlaced(llvm::raw_ostream &os, const SearchReport &r) {
  const sim::CandidateResult &p = *r.placed;
  os << "  placed job by job (" << r.placedBy << "): ";
  if (!p.simulated)
    os << "not simulated: " << p.error << "\n";
  else if (r.jobByJob)
    os << p.latency << ", peak " << p.peak
       << "; the step becomes its jobs, each on its worker in its order\n";
  else
    os << p.latency << ", peak " << p.peak << "; no faster than the best\n";
}

static void printReport(llvm::raw_ostream &os, const SearchReport &r) {
  const sim::SearchOutcome &o = r.outcome;
  const sim::LowerBound &b = o.bound;
  os << "sched-search: stages = " << r.stages
     << ", microbatches = " << r.microbatches << ", workers = " << r.workers;
  if (r.memoryLimitBytes >= 0)
    os << ", memory limit " << r.memoryLimitBytes << " bytes per worker";
  else if (r.memoryLimit > 0)
    os << ", memory limit " << r.memoryLimit << " activations per worker";
  os << "\n";
  // No wall time here: the table is deterministic (JSON has `seconds`).
  os << llvm::formatv("  candidates {0}: {1} simulated ({2} stuck, {3} over "
                      "the limit, {4} equal to a ranked one), {5} skipped by "
                      "their bounds\n",
                      r.candidates.size(), o.evaluated, o.failed, o.overLimit,
                      o.duplicates, o.pruned);
  os << "  lower bound " << b.value() << ": " << b.binding()
     << " (critical path " << b.criticalPath << ", work / W " << b.work;
  if (r.memoryLimit > 0)
    os << ", memory-time " << b.memoryTime;
  os << ")\n";
  int64_t best = r.bestLatency();
  os << llvm::formatv("  best {0}, gap {1:f1}%", best,
                      100 * gapOf(best, b.value()));
  if (!r.replayed.empty()) {
    auto [ticks, depth] = r.replayed.lookup(r.best());
    os << "; replayed " << ticks << " at prefetch-depth=" << depth;
  }
  if (std::optional<size_t> named = bestNamed(r))
    os << "; best named strategy " << Attribute(r.candidates[*named].strategy)
       << " at " << o.results[*named].latency;
  else
    os << "; no named strategy fits";
  os << "\n";
  if (r.exact)
    os << "  exact optimum " << r.exact->makespan
       << (r.exact->proven ? " (proven" : " (not proven") << ", "
       << r.exact->nodes << " nodes)\n";
  else if (!r.exactSkipped.empty())
    os << "  exact optimum not searched: " << r.exactSkipped << "\n";
  if (r.placed)
    printPlaced(os, r);
  bool bytes = r.memoryLimitBytes >= 0, replay = !r.replayed.empty();
  os << "  rank  latency     gap  peak" << (bytes ? "       bytes" : "")
     << (replay ? "  replayed  prefetch" : "") << "  schedule\n";
  for (auto [k, i] : llvm::enumerate(r.shown())) {
    const sim::CandidateResult &c = o.results[i];
    os << llvm::formatv("  {0,4}  {1,7}  {2,5:f1}%  {3,4}  ", k + 1, c.latency,
                        100 * gapOf(c.latency, b.value()), c.peak);
    if (bytes)
      os << llvm::formatv("{0,10}  ", c.peakBytes);
    if (replay) {
      auto [ticks, depth] = r.replayed.lookup(i);
      if (ticks < 0)
        os << "    failed         -  ";
      else
        os << llvm::formatv("{0,8}  {1,8}  ", ticks, depth);
    }
    printCandidate(os, r.candidates[i]);
    os << "\n";
  }
}

static llvm::json::Object reportJson(const SearchReport &r) {
  const sim::SearchOutcome &o = r.outcome;
  const sim::LowerBound &b = o.bound;
  llvm::json::Array ranking;
  for (auto [k, i] : llvm::enumerate(r.shown())) {
    const sim::CandidateResult &c = o.results[i];
    llvm::json::Object entry{
        {"rank", int64_t(k + 1)},
        {"latency", c.latency},
        {"gap", gapOf(c.latency, b.value())},
        {"peak_live", c.peak},
        {"peak_bytes", c.peakBytes},
        {"schedule", candidateText(r.candidates[i])}};
    if (auto it = r.replayed.find(i); it != r.replayed.end()) {
      entry["replayed"] = it->second.first;
      entry["prefetch_depth"] = it->second.second;
    }
    ranking.push_back(std::move(entry));
  }
  llvm::json::Object json{
      {"stages", r.stages},
      {"microbatches", r.microbatches},
      {"workers", r.workers},
      {"memory_limit", r.memoryLimit},
      {"memory_limit_bytes", r.memoryLimitBytes},
      {"equal_to_ranked", o.duplicates},
      {"candidates", int64_t(r.candidates.size())},
      {"simulated", o.evaluated},
      {"stuck", o.failed},
      {"over_limit", o.overLimit},
      {"skipped", o.pruned},
      {"seconds", r.seconds},
      {"bound", lowerBoundJson(b)},
      {"ranking", std::move(ranking)}};
  if (std::optional<size_t> named = bestNamed(r))
    json["best_named"] = llvm::json::Object{
        {"schedule", candidateText(r.candidates[*named])},
        {"latency", o.results[*named].latency},
        {"peak_live", o.results[*named].peak}};
  else
    json["best_named"] = nullptr;
  if (r.placed)
    json["job_by_job"] = llvm::json::Object{
        {"latency", r.placed->simulated ? llvm::json::Value(r.placed->latency)
                                        : llvm::json::Value(nullptr)},
        {"peak_live", r.placed->peak},
        {"by", r.placedBy},
        {"chosen", r.jobByJob}};
  json["best_latency"] = r.bestLatency();
  if (r.exact)
    json["exact"] = llvm::json::Object{{"makespan", r.exact->makespan},
                                       {"proven", r.exact->proven},
                                       {"nodes", r.exact->nodes}};
  return json;
}

void SchedSearch::emitReport(const SearchReport &report,
                             llvm::json::Array &steps) {
  if (format == StatsFormat::Json)
    steps.push_back(reportJson(report));
  else
    printReport(llvm::outs(), report);
}


/// One stage count: the spec cloned with S stages, partitioned, searched.
/// A count that fails (no partition, no schedule within the limit) keeps
/// its error beside the others, not as the pass's error.
void SchedSearch::tryStageCount(StepOp spec, const LayerFile &file, int64_t S,
                                StageTrial &trial) {
  MLIRContext *ctx = &getContext();
  trial.stages = S;
  trial.scratch = ModuleOp::create(spec.getLoc());
  OpBuilder builder = OpBuilder::atBlockEnd(trial.scratch->getBody());
  trial.spec = cast<StepOp>(builder.clone(*spec.getOperation()));
  trial.spec.setStages(S);
  ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
    if (trial.error.empty())
      trial.error = diag.str();
    return success();
  });
  if (failed(partitionStep(trial.spec, file, layers, 0,
                           sim::PartitionMethod::Optimal)))
    return;
  FailureOr<SearchReport> report = search(trial.spec);
  if (succeeded(report))
    trial.report = std::move(*report);
}

/// Every stage count tried, with its best schedule or its error: JSON into
/// `steps`, or a table on stdout.
void SchedSearch::printStageCounts(StepOp spec, const LayerFile &file,
                                   std::vector<StageTrial> &trials,
                                   const StageTrial *best,
                                   llvm::json::Array &steps) {
  if (format == StatsFormat::Json) {
    llvm::json::Array tried;
    for (StageTrial &trial : trials) {
      llvm::json::Object entry{{"stages", trial.stages}};
      if (trial.report) {
        entry["latency"] = trial.latency();
        entry["bound"] = trial.report->outcome.bound.value();
        llvm::json::Array counts;
        for (int64_t count : trial.spec.getLayersAttr().asArrayRef())
          counts.push_back(count);
        entry["layers"] = std::move(counts);
        entry["schedule"] = chosenText(*trial.report);
      } else {
        entry["error"] = trial.error;
      }
      tried.push_back(std::move(entry));
    }
    steps.push_back(llvm::json::Object{{"stage_counts", std::move(tried)},
                                       {"best_stages", best->stages}});
  } else {
    llvm::raw_ostream &os = llvm::outs();
    os << "sched-search over stage counts: " << file.layers.size()
       << " layers of '" << layers << "' on " << spec.getWorkers()
       << " workers, partitioned for each (docs/partition.md)\n";
    for (StageTrial &trial : trials) {
      os << llvm::formatv("  S = {0,3}: ", trial.stages);
      if (!trial.report) {
        os << trial.error << "\n";
        continue;
      }
      os << llvm::formatv("best {0} (bound {1}), layers [", trial.latency(),
                          trial.report->outcome.bound.value());
      llvm::interleaveComma(trial.spec.getLayersAttr().asArrayRef(), os);
      os << "], ";
      os << chosenText(*trial.report);
      os << (&trial == best ? "  <- best" : "") << "\n";
    }
  }
}

LogicalResult SchedSearch::searchStages(StepOp spec, llvm::json::Array &steps) {
  // A tie names stages of one stage count; another count has other stages.
  if (spec.getTiedAttr())
    return spec.emitOpError(
        "ties stages, which a search over stage counts would renumber: "
        "search the stage count without ties, or search one count "
        "without 'layers'");
  LayerFile file;
  if (std::string error = readLayerFile(layers, file); !error.empty())
    return spec.emitOpError()
           << "cannot partition with '" << layers << "': " << error;
  SmallVector<int64_t> counts(stageCounts.begin(), stageCounts.end());
  if (counts.empty())
    for (int64_t S = 1;
         S <= std::min<int64_t>(int64_t(file.layers.size()), 2 * spec.getWorkers());
         ++S)
      counts.push_back(S);
  for (int64_t S : counts)
    if (S < 1 || S > int64_t(file.layers.size()))
      return spec.emitOpError()
             << "cannot search " << S << " stages of " << file.layers.size()
             << " layers: a stage holds at least one layer";

  std::vector<StageTrial> trials;
  for (int64_t S : counts)
    tryStageCount(spec, file, S, trials.emplace_back());

  StageTrial *best = nullptr;
  for (StageTrial &trial : trials)
    if (trial.report && (!best || trial.latency() < best->latency()))
      best = &trial;
  if (!best) {
    InFlightDiagnostic diag = spec.emitOpError()
                              << "has no stage count with a schedule";
    for (const StageTrial &trial : trials)
      diag.attachNote() << trial.stages << " stages: " << trial.error;
    return diag;
  }

  printStageCounts(spec, file, trials, best, steps);
  emitReport(*best->report, steps);

  // The spec becomes the best stage count's partition and schedule.
  if (best->report->jobByJob) {
    OpBuilder(spec).clone(*best->spec.getOperation());
    spec->erase();
    return success();
  }
  spec.setStages(best->stages);
  spec.setCostAttr(best->spec.getCostAttr());
  spec.setLayersAttr(best->spec.getLayersAttr());
  applyCandidate(spec, best->report->candidates
                           [best->report->best()]);
  return success();
}

void SchedSearch::runOnOperation() {
  llvm::json::Array steps;
  bool failedAny = false;
  SmallVector<StepOp> specs;
  getOperation().walk([&](StepOp step) { specs.push_back(step); });
  for (StepOp step : specs) {
    if (!step.isSpec()) {
      step.emitOpError("--sched-search needs a step spec (no jobs): run it "
                       "before --sched-expand");
      failedAny = true;
      continue;
    }
    workSpent = 0;
    if (!layers.empty()) {
      failedAny |= failed(searchStages(step, steps));
      continue;
    }
    if (!stageCounts.empty()) {
      step.emitOpError("--sched-search: stages= lists the stage counts to "
                       "partition a layer file into: give layers=");
      failedAny = true;
      continue;
    }
    FailureOr<SearchReport> report = search(step);
    if (failed(report)) {
      failedAny = true;
      continue;
    }
    emitReport(*report, steps);
  }
  if (failedAny)
    return signalPassFailure();
  if (format == StatsFormat::Json)
    llvm::outs() << llvm::formatv(
        "{0:2}\n", llvm::json::Value(llvm::json::Object{{"steps", std::move(steps)}}));
}
