//===- SearchSpace.cpp - the schedules --sched-search tries ---------------===//

#include "pipesched/Transforms/SearchSpace.h"

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Scheduling/Saturating.h"
#include "pipesched/Transforms/CommProblem.h"
#include "pipesched/Transforms/StepPhases.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sim = pipesched::scheduling;

Attribute SearchCandidate::family() const {
  if (strategy)
    return strategy;
  return AffineMapAttr::get(compute);
}

/// The candidate's placement maps for the spec's shape.
static std::pair<AffineMap, AffineMap> placementMaps(StepOp spec,
                                                     const SearchCandidate &c) {
  if (!c.strategy)
    return {c.compute, c.compute};
  int64_t S = spec.getStages(), B = spec.getMicrobatches(),
          W = spec.getWorkers();
  return {c.strategy.getComputeMap(S, B, W), c.strategy.getWeightsMap(S, B, W)};
}

sim::SearchProblem pipesched::buildSearchProblem(StepOp spec) {
  sim::SearchProblem p;
  p.stages = spec.getStages();
  p.microbatches = spec.getMicrobatches();
  p.workers = spec.getWorkers();
  CostAttr cost = spec.getCostOrDefault();
  p.actBytes = cost.getActBytes();
  p.weightBytes = cost.getWeightBytes();
  bool split = cost.isSplitBackward();
  SmallVector<int64_t> preds;
  for (int64_t s = 0; s < p.stages; ++s) {
    p.forward.push_back(cost.getDuration(s, Direction::Forward));
    p.backward.push_back(cost.getDuration(s, Direction::Backward));
    if (split)
      p.weight.push_back(cost.getDuration(s, Direction::BackwardWeight));
    spec.getStagePreds(s, preds);
    p.stagePreds.emplace_back(preds.begin(), preds.end());
  }
  // An overlapped pair may take less than its members: every bound scales
  // by the smallest such ratio (any step may carry overlapped forwards once
  // ordered, so it is computed whenever the cost says what pairs take).
  if (!cost.getFwdBwd().empty()) {
    int64_t maxBackward = 0;
    for (int64_t s = 0; s < p.stages; ++s)
      maxBackward = std::max(
          maxBackward, p.backward[s] + p.duration(s, sim::Direction::BackwardWeight));
    for (int64_t s = 0; s < p.stages; ++s) {
      int64_t members = p.forward[s] + maxBackward;
      if (members > 0)
        p.overlapRatio = std::min(
            p.overlapRatio,
            double(cost.getOverlapDuration(s, 0)) / double(members));
    }
    p.overlapRatio = std::clamp(p.overlapRatio, 1e-9, 1.0);
  }
  return p;
}

/// The affine priorities every placement is tried with: the named policies
/// and fill-drain in groups of g microbatches (gradient accumulation with
/// less memory), for g = W, 2W, 4W, ... below B.
static std::vector<Attribute> affinePriorities(MLIRContext *ctx, int64_t B,
                                               int64_t W) {
  std::vector<Attribute> keys;
  for (PriorityPolicy policy :
       {PriorityPolicy::FillDrain, PriorityPolicy::BackwardFirst,
        PriorityPolicy::DepthFirst, PriorityPolicy::BreadthFirst})
    keys.push_back(PriorityPolicyAttr::get(ctx, policy));
  AffineExpr b = getAffineDimExpr(1, ctx), d = getAffineDimExpr(2, ctx),
             p = getAffineDimExpr(3, ctx);
  for (int64_t g = W; g < B; g *= 2)
    keys.push_back(AffineMapAttr::get(AffineMap::get(
        4, 0, {b.floorDiv(g), (d + 2).floorDiv(3), b, p}, ctx)));
  return keys;
}

/// Every named strategy that may fit S stages on W workers (verification
/// decides), and those whose placement the affine priorities are tried on
/// (one per distinct placement).
static void namedStrategies(MLIRContext *ctx, int64_t S, int64_t B, int64_t W,
                            std::vector<StrategyAttrInterface> &named,
                            std::vector<StrategyAttrInterface> &placements) {
  auto add = [&](StrategyAttrInterface strategy, bool placement) {
    named.push_back(strategy);
    if (placement)
      placements.push_back(strategy);
  };
  add(DdpAttr::get(ctx), true);
  add(FsdpAttr::get(ctx), false); // computes as DDP does
  add(GpipeAttr::get(ctx), true);
  add(OneFOneBAttr::get(ctx), false); // GPipe's placement
  if (S % W == 0 && S / W >= 2) {
    int64_t v = S / W;
    add(Interleaved1F1BAttr::get(ctx, v, Interleaved1F1BAttr::kMegatronGroup),
        true);
    add(Interleaved1F1BAttr::get(ctx, v, Interleaved1F1BAttr::kTorchGroup),
        false);
    for (int64_t g = 2 * W; g <= B; g *= 2)
      add(Interleaved1F1BAttr::get(ctx, v, g), false);
    add(LoopedBfsAttr::get(ctx, v), false);
  }
  if (S % W == 0)
    add(ZbH1Attr::get(ctx, S / W), false);
  add(ZbH2Attr::get(ctx), false);
  add(ZbvAttr::get(ctx), true);
  add(VHalfAttr::get(ctx), false);
  add(VMinAttr::get(ctx), false);
  add(DualPipeVAttr::get(ctx), false);
  for (int64_t ring = 1; ring <= W; ++ring) {
    if (W % ring || S % ring)
      continue;
    int64_t groups = W / ring;
    // G = 1, R = S is GPipe and G = W, R = 1 on a chain is DDP's
    // placement: tried once, under their own names.
    add(LppAttr::get(ctx, groups, ring), !(groups == 1 || ring == 1));
    add(FslppAttr::get(ctx, groups, ring), false);
  }

}

/// The memory caps tried with a placement: none, and the search's limit
/// (in bytes: what the weights the placement holds leave of it, in
/// activations, at least one).
static std::vector<MemoryCapAttr> capsFor(StepOp spec,
                                          const sim::SearchProblem &problem,
                                          const SearchCandidate &base) {
  MLIRContext *ctx = spec.getContext();
  std::vector<MemoryCapAttr> caps = {MemoryCapAttr::get(ctx, {}, false)};
  if (problem.memoryLimitBytes >= 0 && problem.actBytes > 0) {
    SmallVector<int64_t> units;
    for (int64_t held : heldWeightBytes(spec, base))
      units.push_back(std::max<int64_t>(
          1, (problem.memoryLimitBytes - held) / problem.actBytes));
    if (llvm::all_equal(units))
      units.resize(1);
    caps.push_back(MemoryCapAttr::get(ctx, units, false));
  } else if (problem.memoryLimit > 0) {
    caps.push_back(MemoryCapAttr::get(ctx, {problem.memoryLimit}, false));
  }
  return caps;
}

/// The mappings of the spec's workers to as many nodes, equal in size,
/// other than its own: contiguous ranks and strided ranks, each with the
/// spec's link between nodes.
static std::vector<NodesAttr> otherNodeMappings(StepOp spec) {
  NodesAttr own = spec.getNodesAttr();
  if (!own)
    return {};
  int64_t W = spec.getWorkers();
  std::vector<int64_t> nodeOf = own.nodeOfWorkers(W);
  llvm::SmallDenseSet<int64_t> distinct(nodeOf.begin(), nodeOf.end());
  int64_t k = int64_t(distinct.size());
  if (k < 2 || W % k != 0)
    return {};
  MLIRContext *ctx = spec.getContext();
  SmallVector<int64_t> strided;
  for (int64_t w = 0; w < W; ++w)
    strided.push_back(w % k);
  std::vector<NodesAttr> mappings;
  for (NodesAttr m :
       {NodesAttr::get(ctx, W / k, {}, own.getTransfer(), own.getLatency(),
                       own.getBandwidth()),
        NodesAttr::get(ctx, 0, strided, own.getTransfer(), own.getLatency(),
                       own.getBandwidth())})
    if (m.nodeOfWorkers(W) != nodeOf)
      mappings.push_back(m);
  return mappings;
}

/// Every candidate again on each other mapping of the workers to nodes.
static void addNodeMappings(StepOp spec,
                            std::vector<SearchCandidate> &candidates) {
  size_t n = candidates.size();
  for (NodesAttr mapping : otherNodeMappings(spec))
    for (size_t i = 0; i < n; ++i) {
      SearchCandidate c = candidates[i];
      c.nodes = mapping;
      candidates.push_back(c);
    }
}

std::vector<SearchCandidate>
pipesched::enumerateCandidates(StepOp spec, const sim::SearchProblem &problem) {
  MLIRContext *ctx = spec.getContext();
  int64_t S = spec.getStages(), B = spec.getMicrobatches(),
          W = spec.getWorkers();
  std::vector<StrategyAttrInterface> named, placements;
  namedStrategies(ctx, S, B, W, named, placements);

  // Keep what verifies as a step of this shape; the refusals are expected
  // (most strategies constrain S, B and W) and not reported.
  OpBuilder builder(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(spec.getLoc());
  builder.setInsertionPointToEnd(scratch->getBody());
  auto probe = cast<StepOp>(builder.clone(*spec.getOperation()));
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  std::vector<SearchCandidate> candidates;
  auto keep = [&](const SearchCandidate &candidate) {
    applyCandidate(probe, candidate);
    if (succeeded(verify(probe)))
      candidates.push_back(candidate);
  };
  for (StrategyAttrInterface strategy : named)
    keep({strategy, {}, {}, {}});
  std::vector<SearchCandidate> bases;
  for (StrategyAttrInterface strategy : placements)
    bases.push_back({strategy, {}, {}, {}});
  // A skewed placement: microbatch b starts on worker b mod W and moves one
  // worker per stage, which balances B not divisible by W.
  if (W > 1) {
    AffineExpr s = getAffineDimExpr(0, ctx), b = getAffineDimExpr(1, ctx);
    bases.push_back({{}, AffineMap::get(3, 0, (s + b) % W), {}, {}});
  }
  for (const SearchCandidate &base : bases) {
    // A placement whose strategy refuses the shape has no maps to evaluate
    // (GPipe's s floordiv (S/W) with S < W divides by zero).
    applyCandidate(probe, base);
    if (base.strategy && failed(verify(probe)))
      continue;
    std::vector<MemoryCapAttr> caps = capsFor(spec, problem, base);
    for (Attribute priority : affinePriorities(ctx, B, W))
      for (MemoryCapAttr cap : caps)
        keep({base.strategy, base.compute, priority, cap});
  }
  addNodeMappings(spec, candidates);
  return candidates;
}

void pipesched::applyCandidate(StepOp step, const SearchCandidate &candidate) {
  step.setStrategyAttr(candidate.strategy);
  step.setComputeMapAttr(candidate.compute ? AffineMapAttr::get(candidate.compute)
                                           : AffineMapAttr());
  step.setWeightsMapAttr({});
  step.setPriorityAttr(candidate.priority);
  step.setMemoryCapAttr(candidate.cap);
  if (candidate.nodes)
    step.setNodesAttr(candidate.nodes);
}

std::vector<int32_t> pipesched::candidateWorkers(StepOp spec,
                                                 const SearchCandidate &c) {
  int64_t S = spec.getStages(), B = spec.getMicrobatches();
  int64_t perPair = spec.getJobsPerPair();
  PlacementTable compute(placementMaps(spec, c).first, S);
  std::vector<int32_t> workers(size_t(S * B * perPair));
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t d = 0; d < perPair; ++d)
        workers[size_t((s * B + b) * perPair + d)] =
            int32_t(compute(s, b, Direction(d)));
  return workers;
}

std::vector<int64_t> pipesched::heldWeightBytes(StepOp spec,
                                                const SearchCandidate &c) {
  int64_t S = spec.getStages(), B = spec.getMicrobatches(),
          W = spec.getWorkers();
  int64_t perPair = spec.getJobsPerPair();
  int64_t bytes = spec.getCostOrDefault().getWeightBytes();
  auto [computeMap, weightsMap] = placementMaps(spec, c);
  PlacementTable compute(computeMap, S), weights(weightsMap, S);
  // (worker, stage) pairs: who owns a replica of what, and who computes
  // what; sets, not a W x S table (W and S may both be large).
  llvm::DenseSet<std::pair<int64_t, int64_t>> owns, computes;
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t d = 0; d < perPair; ++d) {
        int64_t owner = weights(s, b, Direction(d));
        int64_t worker = compute(s, b, Direction(d));
        owns.insert({owner, s});
        if (worker != owner)
          computes.insert({worker, s});
      }
  std::vector<int64_t> stages(size_t(W), 0);
  for (auto [owner, s] : owns)
    if (owner >= 0 && owner < W)
      ++stages[size_t(owner)];
  std::vector<uint8_t> fetches(size_t(W), 0);
  for (auto [worker, s] : computes)
    if (worker >= 0 && worker < W && !owns.contains({worker, s}))
      fetches[size_t(worker)] = 1;
  std::vector<int64_t> held(size_t(W), 0);
  for (int64_t w = 0; w < W; ++w)
    held[size_t(w)] = sim::saturatingMul(
        stages[size_t(w)] + (fetches[size_t(w)] ? 2 : 0), bytes);
  return held;
}

namespace {
/// A candidate simulated on a copy of the spec: the copy, its simulation
/// problem and result (no timeline: a phase failed, its diagnostic at the
/// copy's location, or the simulation is stuck).
struct SimulatedCopy {
  OwningOpRef<ModuleOp> scratch;
  StepOp step;
  SimulationInput input;
  sim::SimulationResult result;
};
} // namespace

/// Simulates a copy of `spec` given its schedule by `apply` (a candidate's
/// scheme, or every job placed and ordered).
static void simulateCopy(StepOp spec,
                         llvm::function_ref<LogicalResult(StepOp)> apply,
                         Location loc, int64_t maxJobs, SimulatedCopy &copy) {
  OpBuilder builder(spec.getContext());
  copy.scratch = ModuleOp::create(spec.getLoc());
  builder.setInsertionPointToEnd(copy.scratch->getBody());
  copy.step = cast<StepOp>(builder.clone(*spec.getOperation()));
  copy.step->setLoc(loc);
  if (failed(apply(copy.step)) ||
      (copy.step.isSpec() && failed(expandStep(copy.step, maxJobs))) ||
      failed(placeStep(copy.step)) ||
      failed(buildSimulationInput(copy.step, {}, copy.input)))
    return;
  copy.result = sim::simulate(copy.input.graph, copy.input.options);
}

static void simulateCopy(StepOp spec, const SearchCandidate &c, Location loc,
                         int64_t maxJobs, SimulatedCopy &copy) {
  simulateCopy(
      spec,
      [&](StepOp step) {
        applyCandidate(step, c);
        return success();
      },
      loc, maxJobs, copy);
}

/// Latency and peaks of a simulated copy (`held`: the weights' bytes per
/// worker), or its error.
static sim::CandidateResult resultOf(StepOp spec, const SimulatedCopy &copy,
                                     ArrayRef<int64_t> held) {
  sim::CandidateResult result;
  const std::optional<sim::Timeline> &timeline = copy.result.timeline;
  if (!timeline) {
    result.error = copy.result.error;
    return result;
  }
  result.simulated = true;
  result.latency = timeline->makespan;
  int64_t act = spec.getCostOrDefault().getActBytes();
  for (auto [w, peak] : llvm::enumerate(timeline->peakLive)) {
    result.peak = std::max(result.peak, peak);
    result.peakBytes = std::max(
        result.peakBytes,
        sim::saturatingAdd(sim::saturatingMul(peak, act),
                           w < held.size() ? held[w] : 0));
  }
  return result;
}

sim::CandidateResult pipesched::evaluateCandidate(StepOp spec,
                                                  const SearchCandidate &c,
                                                  ArrayRef<int64_t> held,
                                                  Location loc,
                                                  int64_t maxJobs) {
  SimulatedCopy copy;
  simulateCopy(spec, c, loc, maxJobs, copy);
  return resultOf(spec, copy, held);
}

LogicalResult pipesched::applyExplicitSchedule(
    StepOp step, const sim::SearchProblem &problem,
    const sim::ExplicitSchedule &schedule, int64_t maxJobs) {
  step.setStrategyAttr({});
  step.setComputeMapAttr({});
  step.setWeightsMapAttr({});
  step.setPriorityAttr({});
  step.setMemoryCapAttr(
      problem.memoryLimit > 0
          ? MemoryCapAttr::get(step.getContext(), {problem.memoryLimit}, false)
          : MemoryCapAttr());
  if (failed(expandStep(step, maxJobs)))
    return failure();
  sim::ProblemJobs graph = sim::buildProblemJobs(problem);
  std::vector<int64_t> position(graph.jobs.size(), 0);
  for (const std::vector<uint32_t> &order :
       sim::workerOrders(schedule, graph, problem.workers))
    for (auto [k, j] : llvm::enumerate(order))
      position[j] = int64_t(k);
  int64_t B = step.getMicrobatches(), perPair = step.getJobsPerPair();
  for (auto job : step.getBody().front().getOps<JobOpInterface>()) {
    sim::JobCoord coord{job.getStageIndex(), job.getMicrobatchIndex(),
                        toSchedulingDirection(job.getDirection())};
    size_t j = size_t(sim::jobCoordIndex(B, perPair, coord));
    // A stage's weights live where it computes (replicas where several do).
    job.setComputeWorker(schedule.worker[j]);
    job.setWeightsWorker(schedule.worker[j]);
    job.setOrderIndex(position[j]);
  }
  return success();
}

sim::CandidateResult pipesched::evaluateExplicitSchedule(
    StepOp spec, const sim::SearchProblem &problem,
    const sim::ExplicitSchedule &schedule, Location loc, int64_t maxJobs) {
  SimulatedCopy copy;
  simulateCopy(
      spec,
      [&](StepOp step) {
        return applyExplicitSchedule(step, problem, schedule, maxJobs);
      },
      loc, maxJobs, copy);
  return resultOf(spec, copy, {});
}

FailureOr<int64_t> pipesched::replayCandidate(StepOp spec,
                                              const SearchCandidate &c,
                                              Location loc, int64_t maxJobs,
                                              int64_t prefetchDepth) {
  SimulatedCopy copy;
  simulateCopy(spec, c, loc, maxJobs, copy);
  if (!copy.result.timeline)
    return failure();
  applySimulation(copy.input, *copy.result.timeline);
  // What --sched-lower-ranks plans and replays (LowerRanks.cpp).
  FailureOr<StepCommProblem> problem = buildCommProblem(copy.step, prefetchDepth);
  if (failed(problem) || !problem->problem.check().empty())
    return failure();
  sim::CommPlan plan = sim::planCommunication(problem->problem);
  if (!plan.verify(problem->problem).empty())
    return failure();
  return replayRankPrograms(copy.step, *problem, plan);
}

llvm::json::Object pipesched::lowerBoundJson(const sim::LowerBound &b) {
  return llvm::json::Object{{"value", b.value()},
                            {"binding", b.binding()},
                            {"critical_path", b.criticalPath},
                            {"work", b.work},
                            {"memory_time", b.memoryTime}};
}

void pipesched::printCandidate(llvm::raw_ostream &os,
                               const SearchCandidate &c) {
  if (c.strategy)
    os << "strategy " << Attribute(c.strategy);
  else
    os << "compute " << AffineMapAttr::get(c.compute);
  if (auto policy = dyn_cast_or_null<PriorityPolicyAttr>(c.priority))
    os << " priority <" << stringifyPriorityPolicy(policy.getValue()) << '>';
  else if (c.priority)
    os << " priority " << c.priority;
  if (c.cap) {
    os << " cap <";
    ArrayRef<int64_t> limits = c.cap.getLimits();
    if (limits.empty())
      os << "none";
    else if (limits.size() == 1)
      os << (c.cap.getInBytes() ? "bytes" : "units") << " = " << limits.front();
    else {
      os << (c.cap.getInBytes() ? "bytes" : "units") << " = [";
      llvm::interleaveComma(limits, os);
      os << ']';
    }
    os << '>';
  }
  if (c.nodes) {
    // As the step writes it: `nodes <...>`.
    std::string text;
    llvm::raw_string_ostream(text) << Attribute(c.nodes);
    os << " nodes " << StringRef(text).drop_until([](char ch) { return ch == '<'; });
  }
}
