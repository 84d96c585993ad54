//===- Stats.cpp - latency, bubbles, memory and traffic of a schedule -----===//
//
// Reads a simulated step (every job has `on`, `order` and `at ... to ...`)
// and reports what the schedule costs. See docs/stats.md for every figure
// and how it relates to the seed's Table 1.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Transforms/CommProblem.h"

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Scheduling/Saturating.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"
#include "pipesched/Transforms/SearchSpace.h"
#include "pipesched/Transforms/StepStats.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDSTATS
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct WorkerStats {
  int64_t jobs = 0, busy = 0;
  /// The worker's first start and last end: its span is last - first.
  int64_t first = INT64_MAX, last = 0;
  int64_t actRecv = 0, gradRecv = 0, weightFetches = 0;
  int64_t peakLive = 0, peakLiveBytes = 0, weightsOwned = 0;
  /// Tied reductions with other workers and their bytes (`weights` each).
  int64_t tiedMessages = 0, tiedBytes = 0;
  /// Messages received from another node, and their bytes.
  int64_t interNodeRecv = 0, interNodeBytes = 0;
};

struct StepStats {
  int64_t stages = 0, microbatches = 0, workers = 0;
  int64_t latency = 0;
  double unit = 1; ///< ticks of one stage's forward + backward (mean)
  CostAttr cost;   ///< its `unit` gives ticks a real length
  /// The rank programs replayed with rendezvous transfers (ProgramReplay.h).
  int64_t replayed = 0;
  std::vector<WorkerStats> perWorker;
  /// A scanned backward (--sched-bppsa): the scan's figures per microbatch
  /// as the pass recorded them, and the longest simulated backward (first
  /// scan job's start to last weight gradient's end) of any microbatch.
  DictionaryAttr scan;
  int64_t backwardSpan = 0, scanRecv = 0;
  /// The lower bound every schedule of the step obeys within its own peak
  /// memory (docs/search.md); none for a scanned step or one whose jobs
  /// carry their own durations (the bound reads the cost).
  std::optional<scheduling::LowerBound> lowerBound;
  /// Whether the step ties weights (then the tied traffic is reported).
  bool tied = false;
  /// The step's nodes (then the traffic between nodes is reported).
  NodesAttr nodes;
};

struct SchedStats : pipesched::impl::SchedStatsBase<SchedStats> {
  using Base::Base;

  /// Accepts `--sched-stats=json` besides `--sched-stats=format=json`.
  LogicalResult
  initializeOptions(StringRef options,
                    function_ref<LogicalResult(const Twine &)> errorHandler)
      override {
    if (options == "json" || options == "table")
      return Base::initializeOptions(("format=" + options).str(),
                                     errorHandler);
    return Base::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override;
};
} // namespace

/// Busy time, span, job count and owned weights per worker, and the
/// latency, from the jobs as planned.
static void collectJobs(const scheduling::CommProblem &problem,
                        StepStats &stats) {
  llvm::DenseSet<std::pair<int64_t, int64_t>> owned;
  for (const scheduling::PlannedJob &p : problem.jobs) {
    WorkerStats &w = stats.perWorker[p.worker];
    ++w.jobs;
    w.busy += p.end - p.start;
    w.first = std::min(w.first, p.start);
    w.last = std::max(w.last, p.end);
    stats.latency = std::max(stats.latency, p.end);
    if (owned.insert({p.owner, p.stage}).second)
      ++stats.perWorker[p.owner].weightsOwned;
  }
}

/// A scanned step: the longest simulated backward of any microbatch, its
/// first scan job's start to its last weight gradient's end.
static int64_t longestBackward(const scheduling::CommProblem &problem,
                               int64_t numMicrobatches) {
  std::vector<std::pair<int64_t, int64_t>> span(size_t(numMicrobatches),
                                                {INT64_MAX, 0});
  for (const scheduling::PlannedJob &p : problem.jobs) {
    if (p.direction != scheduling::Direction::Scan &&
        p.direction != scheduling::Direction::BackwardWeight)
      continue;
    auto &[first, last] = span[size_t(p.microbatch)];
    first = std::min(first, p.start);
    last = std::max(last, p.end);
  }
  int64_t longest = 0;
  for (auto [first, last] : span)
    if (first <= last)
      longest = std::max(longest, last - first);
  return longest;
}

/// What the lowered programs would move, and their replayed time.
static LogicalResult collectTraffic(StepOp step, const StepCommProblem &input,
                                    StepStats &stats) {
  const scheduling::CommProblem &problem = input.problem;
  scheduling::CommPlan plan = scheduling::planCommunication(problem);
  stats.nodes = step.getNodesAttr();
  std::vector<int64_t> nodeOf;
  if (stats.nodes)
    nodeOf = stats.nodes.nodeOfWorkers(step.getWorkers());
  scheduling::Traffic traffic =
      scheduling::accountTraffic(problem, plan, nodeOf);
  // The rank programs' own time (rendezvous transfers), as lowered.
  FailureOr<int64_t> replayed = replayRankPrograms(step, input, plan);
  if (failed(replayed))
    return failure();
  stats.replayed = *replayed;
  for (int64_t n : traffic.scanReceived)
    stats.scanRecv += n;
  for (auto [w, ws] : llvm::enumerate(stats.perWorker)) {
    ws.actRecv = traffic.activationsReceived[w];
    ws.gradRecv = traffic.gradientsReceived[w];
    ws.weightFetches = traffic.weightFetches[w];
    ws.tiedMessages = traffic.tiedReductions[w];
    ws.tiedBytes = traffic.tiedBytes[w];
    ws.interNodeRecv = traffic.interNodeReceived[w];
    ws.interNodeBytes = traffic.interNodeBytes[w];
  }
  stats.tied = !problem.tiedGroups.empty();
  return success();
}

/// Live activations through the scheduler's accounting: a forward's input
/// is live on its worker from its start until the job that consumes it
/// last (the backward, or its weight-gradient half) ends. Returns the
/// largest peak.
static int64_t collectLiveMemory(const scheduling::CommProblem &problem,
                                 CostAttr cost, StepStats &stats) {
  using scheduling::Direction;
  Direction lastUse = problem.gradientJob;
  llvm::DenseMap<std::pair<int64_t, int64_t>, uint32_t> forwardOf;
  for (auto [i, p] : llvm::enumerate(problem.jobs))
    if (p.direction == Direction::Forward)
      forwardOf[{p.stage, p.microbatch}] = static_cast<uint32_t>(i);
  scheduling::JobGraph graph;
  graph.numWorkers = static_cast<int32_t>(stats.workers);
  std::vector<int64_t> start, end;
  // With parts (`act_w`) the input half frees its bytes first; an
  // activation counts as live until its last part is freed.
  bool parts = cost.hasActivationParts();
  int64_t kept = cost.getWeightHalfActBytes();
  for (const scheduling::PlannedJob &p : problem.jobs) {
    scheduling::Job job;
    job.worker = p.worker;
    bool firstPart = parts && p.direction == Direction::Backward;
    if (p.direction == Direction::Forward) {
      job.acquire = 1;
      job.acquireBytes = cost.getActBytes();
    } else if (p.direction == lastUse || firstPart) {
      auto fwd = forwardOf.find({p.stage, p.microbatch});
      if (fwd != forwardOf.end())
        job.releases = fwd->second;
      if (parts) {
        job.releaseUnits = firstPart ? 0 : 1;
        job.releaseBytes = firstPart ? cost.getActBytes() - kept : kept;
      }
    }
    graph.jobs.push_back(job);
    start.push_back(p.start);
    end.push_back(p.end);
  }
  scheduling::LiveMemory live =
      scheduling::accountLiveMemory(graph, start, end);
  int64_t peak = 0;
  for (auto [worker, w] : llvm::enumerate(stats.perWorker)) {
    w.peakLive = live.peak[worker];
    w.peakLiveBytes = live.peakBytes[worker];
    peak = std::max(peak, w.peakLive);
  }
  return peak;
}

/// Collects the figures of one simulated step; fails with a diagnostic.
static FailureOr<StepStats> collect(StepOp step) {
  StepStats stats;
  stats.stages = step.getStages();
  stats.microbatches = step.getMicrobatches();
  stats.workers = step.getWorkers();
  stats.perWorker.resize(stats.workers);
  CostAttr cost = step.getCostOrDefault();
  stats.cost = cost;
  double sweep = 0;
  for (int64_t s = 0; s < stats.stages; ++s)
    for (Direction d : {Direction::Forward, Direction::Backward,
                        Direction::BackwardWeight})
      sweep += cost.getDuration(s, d);
  stats.unit = sweep / stats.stages;

  // Every job's placement and times, read once: the same conversion the
  // lowering plans from, so the traffic below is what it will send.
  FailureOr<StepCommProblem> input =
      buildCommProblem(step, /*prefetchDepth=*/1);
  if (failed(input))
    return failure();
  const scheduling::CommProblem &problem = input->problem;
  if (std::string error = problem.check(); !error.empty())
    return step.emitOpError() << "cannot plan communication: " << error;
  collectJobs(problem, stats);

  stats.scan = step->getAttrOfType<DictionaryAttr>("sched.bppsa");
  if (stats.scan)
    stats.backwardSpan = longestBackward(problem, stats.microbatches);
  if (failed(collectTraffic(step, *input, stats)))
    return failure();
  int64_t peak = collectLiveMemory(problem, cost, stats);

  // The bound at the schedule's own peak: no schedule keeping at most that
  // many activations per worker is faster. None for a scanned step or one
  // whose jobs carry their own durations (the bound reads the cost).
  bool ownDurations = llvm::any_of(
      step.getBody().front().getOps<JobOpInterface>(),
      [](JobOpInterface job) { return job.getExplicitDuration().has_value(); });
  if (!stats.scan && !ownDurations) {
    scheduling::SearchProblem boundProblem = buildSearchProblem(step);
    boundProblem.memoryLimit = peak > 0 ? peak : -1;
    if (boundProblem.check().empty())
      stats.lowerBound = scheduling::computeLowerBound(boundProblem);
  }
  return stats;
}

namespace {
/// Totals derived from the per-worker figures.
struct Totals {
  int64_t busy = 0, actRecv = 0, gradRecv = 0, weightFetches = 0;
  int64_t peakLive = 0, peakLiveBytes = 0;
  int64_t maxBusy = 0;
  double latencyUnits, bubbleOfTotal, bubbleOfIdeal, bubbleRate,
      stageBubbleRate, rho, bound;
};
} // namespace

/// A worker's span: from its first start to its last end (0 if idle).
static int64_t spanOf(const WorkerStats &w) {
  return w.jobs > 0 ? w.last - w.first : 0;
}

/// The Zero Bubble code's per-stage bubble rate (zb.py: the longest stage
/// time, first F's start to last W's end): cost = the longest worker span,
/// less the busiest worker's busy, over that cost.
static double stageBubbleRate(const StepStats &s, int64_t maxBusy) {
  int64_t span = 0;
  for (const WorkerStats &w : s.perWorker)
    span = std::max(span, spanOf(w));
  return span > 0 ? double(span - maxBusy) / span : 0;
}

static Totals totals(const StepStats &s) {
  Totals t;
  for (const WorkerStats &w : s.perWorker) {
    t.busy += w.busy;
    t.maxBusy = std::max(t.maxBusy, w.busy);
    t.actRecv += w.actRecv;
    t.gradRecv += w.gradRecv;
    t.weightFetches += w.weightFetches;
    t.peakLive = std::max(t.peakLive, w.peakLive);
    t.peakLiveBytes = std::max(t.peakLiveBytes, w.peakLiveBytes);
  }
  double capacity = static_cast<double>(s.latency) * s.workers;
  // Zero durations everywhere make the unit 0: no unit, no figure (a NaN
  // would also make --sched-stats=json invalid JSON).
  t.latencyUnits = s.unit > 0 ? s.latency / s.unit : 0;
  t.bubbleOfTotal = capacity > 0 ? (capacity - t.busy) / capacity : 0;
  t.bubbleOfIdeal = t.busy > 0 ? (capacity - t.busy) / t.busy : 0;
  // The Zero Bubble paper's bubble rate, (cost - m(F+B+W)) / cost, two
  // ways (docs/stats.md): cost the step's makespan and m(F+B+W) the work of
  // its busiest worker; or per stage, as the paper's code measures it.
  t.bubbleRate = s.latency > 0
                     ? static_cast<double>(s.latency - t.maxBusy) / s.latency
                     : 0;
  t.stageBubbleRate = stageBubbleRate(s, t.maxBusy);
  t.rho = t.latencyUnits > 0
              ? static_cast<double>(s.stages * s.microbatches) /
                    (t.latencyUnits * s.workers)
              : 0;
  t.bound = static_cast<double>(t.peakLive) / s.stages;
  return t;
}

/// The tied reductions' traffic, in total and per worker.
static void printTiedTraffic(llvm::raw_ostream &os, const StepStats &s) {
  int64_t messages = 0, bytes = 0;
  std::string perMessages, perBytes;
  for (const WorkerStats &w : s.perWorker) {
    messages += w.tiedMessages;
    bytes = scheduling::saturatingAdd(bytes, w.tiedBytes);
    perMessages += (perMessages.empty() ? "" : ", ") +
                   std::to_string(w.tiedMessages);
    perBytes += (perBytes.empty() ? "" : ", ") + std::to_string(w.tiedBytes);
  }
  os << "tied weights: " << messages << " messages, " << bytes
     << " bytes (per worker: messages [" << perMessages << "], bytes ["
     << perBytes << "])\n";
}

/// The messages between nodes and their share, in total and per worker.
static void printNodeTraffic(llvm::raw_ostream &os, const StepStats &s) {
  int64_t messages = 0, bytes = 0;
  std::string perMessages;
  for (const WorkerStats &w : s.perWorker) {
    messages += w.interNodeRecv;
    bytes = scheduling::saturatingAdd(bytes, w.interNodeBytes);
    perMessages += (perMessages.empty() ? "" : ", ") +
                   std::to_string(w.interNodeRecv);
  }
  os << "between nodes: " << messages << " messages received, " << bytes
     << " bytes (per worker: [" << perMessages << "])\n";
}

/// The scan's shape and simulated backward, for a scanned step.
static void printScan(llvm::raw_ostream &os, const StepStats &s) {
  auto get = [&](StringRef key) {
    auto value = s.scan.getAs<IntegerAttr>(key);
    return value ? (long long)value.getInt() : 0LL;
  };
  os << llvm::format("scan: %lld steps (2 ceil(log2 S)), product depth %lld; "
                     "per microbatch: critical path %lld vs %lld for "
                     "back-propagation, work %lld vs %lld\n",
                     get("steps"), get("product_depth"), get("critical_path"),
                     get("sequential_path"), get("work"),
                     get("sequential_work"));
  os << llvm::format("scan simulated: longest backward %lld ticks (first scan "
                     "job to last weight gradient); %lld scan tensors "
                     "received\n",
                     (long long)s.backwardSpan, (long long)s.scanRecv);
}

static void printTable(llvm::raw_ostream &os, const StepStats &s) {
  Totals t = totals(s);
  os << "sched.step stages = " << s.stages << ", microbatches = "
     << s.microbatches << ", workers = " << s.workers << "\n";
  os << "worker  jobs  busy  idle  bubble  act_recv  grad_recv  "
        "weight_fetches  peak_live  peak_live_bytes  weights_owned\n";
  for (auto [i, w] : llvm::enumerate(s.perWorker)) {
    int64_t idle = s.latency - w.busy;
    os << llvm::format("%6zu  %4lld  %4lld  %4lld  %6.4f  %8lld  %9lld  "
                       "%14lld  %9lld  %15lld  %13lld\n",
                       i, (long long)w.jobs, (long long)w.busy,
                       (long long)idle,
                       s.latency ? double(idle) / s.latency : 0.0,
                       (long long)w.actRecv, (long long)w.gradRecv,
                       (long long)w.weightFetches, (long long)w.peakLive,
                       (long long)w.peakLiveBytes, (long long)w.weightsOwned);
  }
  os << llvm::format("latency: %lld ticks = %.4f units (1 unit = %.4f "
                     "ticks: one stage's forward + backward)\n",
                     (long long)s.latency, t.latencyUnits, s.unit);
  if (s.cost.hasTimeUnit())
    os << llvm::format("predicted step time: %.3f ms (replayed %lld ticks "
                       "of %lld ns; the job simulation alone: %.3f ms)\n",
                       s.cost.toMilliseconds(s.replayed), (long long)s.replayed,
                       (long long)s.cost.getTickNs(),
                       s.cost.toMilliseconds(s.latency));
  os << llvm::format("bubble: %.4f of total time (idle / (L*W)), %.4f of "
                     "ideal time (idle / busy, Megatron's (p-1)/m)\n",
                     t.bubbleOfTotal, t.bubbleOfIdeal);
  os << llvm::format("bubble rate (Zero Bubble's): %.4f of the makespan "
                     "((L - busiest worker's busy) / L), %.4f per stage "
                     "((longest worker span - busiest worker's busy) / that span)\n",
                     t.bubbleRate, t.stageBubbleRate);
  os << llvm::format("traffic: %lld activations and %lld gradients received, "
                     "%lld weight fetches\n",
                     (long long)t.actRecv, (long long)t.gradRecv,
                     (long long)t.weightFetches);
  if (s.tied)
    printTiedTraffic(os, s);
  if (s.nodes)
    printNodeTraffic(os, s);
  os << llvm::format("memory: peak %lld live activations (%lld bytes) on the "
                     "busiest worker\n",
                     (long long)t.peakLive, (long long)t.peakLiveBytes);
  os << llvm::format("throughput: rho = S*B/(L*W) = %.4f; bound M/S = %.4f; "
                     "rho / bound = %.4f\n",
                     t.rho, t.bound, t.bound > 0 ? t.rho / t.bound : 0.0);
  if (const std::optional<scheduling::LowerBound> &b = s.lowerBound)
    os << llvm::format("lower bound: %lld ticks at this peak memory, %s "
                       "(critical path %lld, work / W %lld, memory-time "
                       "%lld); L / bound = %.4f\n",
                       (long long)b->value(), b->binding(),
                       (long long)b->criticalPath, (long long)b->work,
                       (long long)b->memoryTime,
                       b->value() > 0 ? double(s.latency) / b->value() : 0.0);
  os << llvm::format("replayed: %lld ticks (the rank programs, a transfer "
                     "moving once both ends have posted it)\n",
                     (long long)s.replayed);
  if (s.scan)
    printScan(os, s);
}

static llvm::json::Value toJson(const StepStats &s) {
  Totals t = totals(s);
  llvm::json::Array workers;
  for (auto [i, w] : llvm::enumerate(s.perWorker))
    workers.push_back(llvm::json::Object{
        {"worker", static_cast<int64_t>(i)},
        {"jobs", w.jobs},
        {"busy", w.busy},
        {"idle", s.latency - w.busy},
        {"span", spanOf(w)},
        {"act_recv", w.actRecv},
        {"grad_recv", w.gradRecv},
        {"weight_fetches", w.weightFetches},
        {"peak_live", w.peakLive},
        {"peak_live_bytes", w.peakLiveBytes},
        {"weights_owned", w.weightsOwned}});
  if (s.tied)
    for (auto [i, w] : llvm::enumerate(s.perWorker)) {
      llvm::json::Object &o = *workers[i].getAsObject();
      o["tied_messages"] = w.tiedMessages;
      o["tied_bytes"] = w.tiedBytes;
    }
  if (s.nodes)
    for (auto [i, w] : llvm::enumerate(s.perWorker)) {
      llvm::json::Object &o = *workers[i].getAsObject();
      o["inter_node_recv"] = w.interNodeRecv;
      o["inter_node_bytes"] = w.interNodeBytes;
    }
  llvm::json::Object result{
      {"stages", s.stages},
      {"microbatches", s.microbatches},
      {"workers", s.workers},
      {"latency", s.latency},
      {"unit", s.unit},
      {"latency_units", t.latencyUnits},
      {"busy", t.busy},
      {"bubble_of_total", t.bubbleOfTotal},
      {"bubble_of_ideal", t.bubbleOfIdeal},
      {"bubble_rate", t.bubbleRate},
      {"stage_bubble_rate", t.stageBubbleRate},
      {"act_recv", t.actRecv},
      {"grad_recv", t.gradRecv},
      {"weight_fetches", t.weightFetches},
      {"peak_live", t.peakLive},
      {"peak_live_bytes", t.peakLiveBytes},
      {"rho", t.rho},
      {"bound", t.bound},
      {"per_worker", std::move(workers)}};
  result["replayed"] = s.replayed;
  if (const std::optional<scheduling::LowerBound> &b = s.lowerBound)
    result["lower_bound"] = lowerBoundJson(*b);
  if (s.tied) {
    int64_t messages = 0, bytes = 0;
    for (const WorkerStats &w : s.perWorker) {
      messages += w.tiedMessages;
      bytes = scheduling::saturatingAdd(bytes, w.tiedBytes);
    }
    result["tied_messages"] = messages;
    result["tied_bytes"] = bytes;
  }
  if (s.cost.hasTimeUnit()) {
    result["tick_ns"] = s.cost.getTickNs();
    result["latency_ms"] = s.cost.toMilliseconds(s.latency);
    result["predicted_ms"] = s.cost.toMilliseconds(s.replayed);
  }
  if (s.scan) {
    llvm::json::Object scan;
    for (NamedAttribute entry : s.scan)
      if (auto value = dyn_cast<IntegerAttr>(entry.getValue()))
        scan[entry.getName().strref()] = value.getInt();
    scan["backward_span"] = s.backwardSpan;
    scan["scan_recv"] = s.scanRecv;
    result["scan"] = std::move(scan);
  }
  return result;
}

FailureOr<llvm::json::Object> pipesched::collectStepStats(StepOp step) {
  FailureOr<StepStats> stats = collect(step);
  if (failed(stats))
    return failure();
  return std::move(*toJson(*stats).getAsObject());
}

void SchedStats::runOnOperation() {
  SmallVector<StepOp> stepOps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(getOperation(), stepOps, programs);
  // Rank programs no longer hold the schedule's timeline as a whole.
  if (!programs.empty()) {
    programs.front().emitOpError("holds rank programs: run --sched-stats "
                                 "before --sched-lower-ranks");
    return signalPassFailure();
  }
  llvm::json::Array steps;
  for (StepOp step : stepOps) {
    if (failed(requireJobs(step, "--sched-stats",
                           "--sched-expand, --sched-place and "
                           "--sched-simulate")))
      return signalPassFailure();
    FailureOr<StepStats> stats = collect(step);
    if (failed(stats))
      return signalPassFailure();
    if (format == StatsFormat::Table)
      printTable(llvm::outs(), *stats);
    else
      steps.push_back(toJson(*stats));
  }
  if (format == StatsFormat::Json)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(
                                               llvm::json::Object{
                                                   {"steps", std::move(steps)}}))
                 << "\n";
  markAllAnalysesPreserved();
}
