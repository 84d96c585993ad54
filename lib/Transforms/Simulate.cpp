//===- Simulate.cpp - simulate a placed step and order its workers --------===//
//
// A thin adapter: step -> scheduling::JobGraph -> simulate -> attributes.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Scheduling/Saturating.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDSIMULATE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sim = pipesched::scheduling;

namespace {
struct SchedSimulate : pipesched::impl::SchedSimulateBase<SchedSimulate> {
  using Base::Base;

  void runOnOperation() override;
};
} // namespace

/// Groups the job ops of `step` into simulation jobs: an `overlapped`
/// forward takes the next job in its worker's order (a backward) and, with a
/// split backward, the one after it (that backward's weight half). Returns
/// the group of each op, by position in the block.
static FailureOr<SmallVector<uint32_t>>
groupOverlappedPairs(StepOp step, MutableArrayRef<JobOpInterface> ops, bool split,
                     bool replay, SimulationInput &jobs) {
  bool anyOverlapped = llvm::any_of(ops, [](JobOpInterface job) {
    auto forward = dyn_cast<ForwardOp>(job.getOperation());
    return forward && forward.getOverlapped();
  });
  SmallVector<uint32_t> group(ops.size(), UINT32_MAX);
  llvm::DenseMap<std::pair<int64_t, int64_t>, uint32_t> slot;
  if (anyOverlapped) {
    if (!replay)
      return step.emitOpError("has overlapped forward-backward pairs, which "
                              "need every job's order (and no reorder)");
    for (auto [i, job] : llvm::enumerate(ops))
      slot[{*job.getComputeWorker(), *job.getOrderIndex()}] = uint32_t(i);
  }
  // The partners of each overlapped forward, found first: a backward may
  // come before its forward in the block.
  SmallVector<uint32_t> leaderOf(ops.size(), UINT32_MAX);
  SmallVector<SmallVector<uint32_t, 2>> partnersOf(ops.size());
  for (auto [i, job] : llvm::enumerate(ops)) {
    auto forward = dyn_cast<ForwardOp>(job.getOperation());
    if (!forward || !forward.getOverlapped())
      continue;
    int64_t worker = *job.getComputeWorker(), order = *job.getOrderIndex();
    auto partner = slot.find({worker, order + 1});
    if (partner == slot.end() ||
        ops[partner->second].getDirection() != Direction::Backward)
      return job->emitOpError()
             << describeJob(job)
             << " is overlapped but the next job of worker " << worker
             << " is not a backward";
    SmallVector<uint32_t, 2> &partners = partnersOf[i];
    partners.push_back(partner->second);
    if (split) {
      JobOpInterface backward = ops[partner->second];
      auto weight = slot.find({worker, order + 2});
      if (weight == slot.end() ||
          ops[weight->second].getDirection() != Direction::BackwardWeight ||
          ops[weight->second].getStageIndex() != backward.getStageIndex() ||
          ops[weight->second].getMicrobatchIndex() !=
              backward.getMicrobatchIndex())
        return job->emitOpError()
               << describeJob(job) << " is overlapped with "
               << describeJob(backward)
               << ", which its weight half must follow at once";
      partners.push_back(weight->second);
    }
    for (uint32_t p : partners) {
      if (leaderOf[p] != UINT32_MAX || partnersOf[p].size())
        return ops[p]->emitOpError()
               << describeJob(ops[p]) << " is in two overlapped pairs";
      leaderOf[p] = uint32_t(i);
    }
  }
  for (auto [i, job] : llvm::enumerate(ops)) {
    if (leaderOf[i] != UINT32_MAX)
      continue; // grouped with its forward
    group[i] = uint32_t(jobs.members.size());
    jobs.members.push_back({job});
    for (uint32_t p : partnersOf[i]) {
      group[p] = group[i];
      jobs.members.back().push_back(ops[p]);
    }
  }
  return group;
}

namespace {
/// Which cap the simulation keeps: the options win over the step's `cap`.
struct CapChoice {
  MemoryCapAttr stepCap; ///< the step's, unless an option overrides it
  bool inBytes = false;  ///< the cap counts bytes (`act` per activation)
  /// The activation is freed in parts (`act_w`): memory is counted in
  /// bytes, and a cap in activations is `act` bytes each.
  bool parts = false;
  bool countsBytes() const { return inBytes || parts; }
};

/// Every job of `step`, each with a compute worker; `allOrdered` when every
/// job also has an order index.
struct PlacedJobs {
  SmallVector<JobOpInterface> ops;
  bool allOrdered = true;
};
} // namespace

static FailureOr<CapChoice> chooseCap(StepOp step,
                                      const SimulationOverrides &o) {
  if (o.transferTime < -1 || o.memoryCap < 0 || o.memoryCapBytes < 0)
    return step.emitOpError()
           << "--sched-simulate needs transfer-time >= -1 (-1: the cost's), "
              "memory-cap >= 0 and memory-cap-bytes >= 0 (0: none given), got "
           << o.transferTime << ", " << o.memoryCap << " and "
           << o.memoryCapBytes;
  CapChoice cap;
  cap.stepCap = step.getMemoryCapAttr();
  if (cap.stepCap && (o.noMemoryCap || o.memoryCap > 0 ||
                      o.memoryCapBytes > 0 || cap.stepCap.isNone()))
    cap.stepCap = {};
  cap.inBytes = o.memoryCapBytes > 0 ||
                (o.memoryCap == 0 && cap.stepCap && cap.stepCap.getInBytes());
  if (cap.inBytes && step.getCostOrDefault().getActBytes() == 0)
    return step.emitOpError("a cap in bytes needs the cost's 'act' size");
  cap.parts = step.getCostOrDefault().hasActivationParts();
  return cap;
}

static FailureOr<PlacedJobs> collectPlacedJobs(StepOp step) {
  PlacedJobs placed;
  placed.ops.reserve(step.getBody().front().getOperations().size());
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    if (!job.getComputeWorker())
      return job->emitOpError()
             << describeJob(job)
             << " has no compute worker: run --sched-place first";
    placed.allOrdered &= job.getOrderIndex().has_value();
    placed.ops.push_back(job);
  }
  return placed;
}

/// One simulation job per group of `jobs.members`: worker, duration,
/// memory, predecessors, and its priority key row appended to `keys`.
static void addSimulationJobs(StepOp step, const ResolvedPriority &priority,
                              const CapChoice &cap,
                              const llvm::DenseMap<Operation *, uint32_t> &groupOf,
                              SimulationInput &jobs,
                              std::vector<int64_t> &keys) {
  CostAttr cost = step.getCostOrDefault();
  bool split = cost.isSplitBackward();
  int64_t actBytes = cost.getActBytes();
  // With parts, the input half frees what the weight half does not keep.
  int64_t keptBytes = cost.getWeightHalfActBytes();
  // The forward (s, b) whose activation a backward (or, when split, its
  // weight-gradient job) frees.
  llvm::DenseMap<std::pair<int64_t, int64_t>, uint32_t> forwardOf;
  for (const auto &[op, id] : groupOf) {
    auto job = cast<JobOpInterface>(op);
    if (job.getDirection() == Direction::Forward)
      forwardOf[{job.getStageIndex(), job.getMicrobatchIndex()}] = id;
  }
  SmallVector<int64_t, 4> row;
  std::vector<uint32_t> preds;
  for (auto [id, members] : llvm::enumerate(jobs.members)) {
    JobOpInterface lead = members.front();
    int64_t s = lead.getStageIndex(), b = lead.getMicrobatchIndex();
    Direction d = lead.getDirection();
    sim::Job simJob;
    simJob.worker = *lead.getComputeWorker();
    simJob.duration =
        members.size() == 1
            ? lead.getExplicitDuration().value_or(cost.getDuration(s, d))
            : cost.getOverlapDuration(s, members[1].getStageIndex());
    row.clear();
    if (priority.key)
      evaluatePriorityKey(priority.key, step.getStages(), s, b, d, row);
    else // A static order ranks jobs by their place in it.
      row.push_back(lead.getOrderIndex().value_or(0));
    keys.insert(keys.end(), row.begin(), row.end());
    preds.clear();
    for (JobOpInterface member : members) {
      Direction md = member.getDirection();
      if (md == Direction::Forward) {
        simJob.acquire = cap.countsBytes() ? actBytes : 1;
        simJob.acquireBytes = actBytes;
      }
      bool freesPart = cap.parts && md == Direction::Backward;
      bool freesActivation = (md == Direction::Backward && !split) ||
                             md == Direction::BackwardWeight || freesPart;
      if (freesActivation) {
        auto it = forwardOf.find(
            {member.getStageIndex(), member.getMicrobatchIndex()});
        simJob.releases = it == forwardOf.end() ? -1 : it->second;
      }
      if (cap.parts && freesActivation) {
        int64_t part = freesPart ? actBytes - keptBytes : keptBytes;
        simJob.releaseUnits = simJob.releaseBytes = part;
      }
      for (Value operand : member->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          if (uint32_t p = groupOf.lookup(producer); p != uint32_t(id))
            preds.push_back(p);
    }
    jobs.graph.addJob(simJob, preds);
  }
}

/// The per-worker caps: a byte or unit option for every worker, else the
/// step's own `cap`.
static void setMemoryCaps(const SimulationOverrides &o, const CapChoice &cap,
                          int64_t numWorkers, int64_t actBytes,
                          sim::SimulationOptions &options) {
  if (o.memoryCapBytes > 0) {
    options.memoryCap.assign(numWorkers, o.memoryCapBytes);
  } else if (o.memoryCap > 0) {
    options.memoryCap.assign(numWorkers, o.memoryCap);
  } else if (cap.stepCap) {
    SmallVector<int64_t> caps = cap.stepCap.perWorker(numWorkers);
    options.memoryCap.assign(caps.begin(), caps.end());
  }
  // Counted in bytes (parts), a cap in activations is `act` bytes each.
  if (cap.parts && !cap.inBytes)
    for (int64_t &c : options.memoryCap)
      if (c >= 0)
        c = sim::saturatingMul(c, actBytes);
}

/// Replays an explicit order (an imported schedule): each worker's jobs by
/// their order index.
static void setExplicitOrder(SimulationInput &jobs, int64_t numWorkers) {
  sim::JobGraph &graph = jobs.graph;
  graph.order.assign(numWorkers, {});
  for (auto [id, members] : llvm::enumerate(jobs.members))
    graph.order[*members.front().getComputeWorker()].push_back(uint32_t(id));
  for (auto &list : graph.order)
    llvm::sort(list, [&](uint32_t a, uint32_t b) {
      return *jobs.members[a].front().getOrderIndex() <
             *jobs.members[b].front().getOrderIndex();
    });
}

LogicalResult pipesched::buildSimulationInput(StepOp step,
                                              const SimulationOverrides &o,
                                              SimulationInput &jobs) {
  FailureOr<CapChoice> cap = chooseCap(step, o);
  if (failed(cap))
    return failure();
  FailureOr<PlacedJobs> placed = collectPlacedJobs(step);
  if (failed(placed))
    return failure();
  bool split = step.getCostOrDefault().isSplitBackward();
  bool replay = placed->allOrdered && !o.reorder && !placed->ops.empty();
  FailureOr<SmallVector<uint32_t>> group =
      groupOverlappedPairs(step, placed->ops, split, replay, jobs);
  if (failed(group))
    return failure();
  llvm::DenseMap<Operation *, uint32_t> groupOf;
  groupOf.reserve(placed->ops.size());
  for (auto [i, job] : llvm::enumerate(placed->ops))
    groupOf[job.getOperation()] = (*group)[i];

  // Key rows of every simulation job (its leader's key), ranked below.
  ResolvedPriority priority = resolvePriority(step);
  size_t keyWidth = priority.key ? priority.key.getNumResults() : 1;
  std::vector<int64_t> keys;
  keys.reserve(jobs.members.size() * keyWidth);
  int64_t W = step.getWorkers();
  jobs.graph.numWorkers = W;
  jobs.graph.predBegin.assign(1, 0);
  addSimulationJobs(step, priority, *cap, groupOf, jobs, keys);
  std::vector<int64_t> ranks = sim::rankKeys(keys, keyWidth);
  for (auto [id, rank] : llvm::enumerate(ranks))
    jobs.graph.jobs[id].priority = rank;

  jobs.options.transferTime = o.transferTime >= 0
                                  ? o.transferTime
                                  : step.getCostOrDefault().getTransfer();
  jobs.options.interNodeTransferTime = jobs.options.transferTime;
  if (NodesAttr nodes = step.getNodesAttr()) {
    jobs.options.nodeOf = nodes.nodeOfWorkers(W);
    jobs.options.interNodeTransferTime =
        nodes.getInterNodeTransfer(jobs.options.transferTime);
  }
  setMemoryCaps(o, *cap, W, step.getCostOrDefault().getActBytes(),
                jobs.options);
  if (replay)
    setExplicitOrder(jobs, W);
  return success();
}

void SchedSimulate::runOnOperation() {
  StepOp step = getOperation();
  if (failed(requireJobs(step, "--sched-simulate",
                         "--sched-expand and --sched-place")))
    return signalPassFailure();
  SimulationOverrides overrides{transferTime, memoryCap, memoryCapBytes,
                                noMemoryCap, reorder};
  SimulationInput jobs;
  if (failed(buildSimulationInput(step, overrides, jobs)))
    return signalPassFailure();
  const sim::JobGraph &graph = jobs.graph;
  const sim::SimulationOptions &options = jobs.options;

  sim::SimulationResult result = sim::simulate(graph, options);
  if (!result.timeline) {
    InFlightDiagnostic diag = step.emitOpError()
                              << "cannot be scheduled: " << result.error;
    for (uint32_t id : result.blockedJobs)
      if (id < jobs.members.size())
        diag.attachNote(jobs.members[id].front()->getLoc())
            << describeJob(jobs.members[id].front()) << " is stuck";
    // Megatron-core's interleaved order is not executable with rounds of
    // fewer than W microbatches or a short last round of fewer than W; it
    // refuses them (ValueError), and every such order that deadlocks here
    // is one of them (the property tests found the shapes).
    ResolvedPriority priority = resolvePriority(step);
    int64_t W = step.getWorkers(), B = step.getMicrobatches();
    int64_t group = priority.group > 0 ? priority.group : W;
    if (priority.order == sim::StaticOrder::Interleaved &&
        (group < W || (B % group != 0 && B % group < W)))
      diag.attachNote(step.getLoc())
          << "the interleaved order runs rounds of " << group
          << " microbatches, the last of " << (B % group ? B % group : group)
          << ", on " << W
          << " workers: Megatron-core refuses rounds of fewer than W "
             "microbatches and a short last round of fewer than W; choose "
             "group = torch, or a group and a microbatch count that fit";
    return signalPassFailure();
  }

  // The scheduler's result is checked independently before it is written.
  if (std::string error = sim::verifyTimeline(graph, options, *result.timeline);
      !error.empty()) {
    step.emitOpError() << "simulated timeline is invalid: " << error;
    return signalPassFailure();
  }

  applySimulation(jobs, *result.timeline);
}

void pipesched::applySimulation(const SimulationInput &jobs,
                                const sim::Timeline &timeline) {
  // An overlapped pair occupies its worker from its start to its end: the
  // forward carries the whole span, the backward halves end with it (zero
  // length), so every later phase sees one job at a time per worker.
  for (const std::vector<uint32_t> &list : timeline.workerOrder) {
    int64_t position = 0;
    for (uint32_t id : list) {
      for (auto [k, member] : llvm::enumerate(jobs.members[id])) {
        JobOpInterface job = member; // a handle; the op is not const
        job.setOrderIndex(position++);
        job.setTimes(k == 0 ? timeline.start[id] : timeline.end[id],
                     timeline.end[id]);
      }
    }
  }
}
