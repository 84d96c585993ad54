//===- Simulate.cpp - simulate a placed step and order its workers --------===//
//
// A thin adapter: step -> scheduling::JobGraph -> simulate -> attributes.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Transforms/Passes.h"

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

private:
  /// Builds the scheduling problem; fails with a located diagnostic.
  LogicalResult buildGraph(StepOp step, sim::JobGraph &graph,
                           SmallVectorImpl<JobOpInterface> &jobs,
                           sim::SimulationOptions &options);
};
} // namespace

LogicalResult SchedSimulate::buildGraph(StepOp step, sim::JobGraph &graph,
                                        SmallVectorImpl<JobOpInterface> &jobs,
                                        sim::SimulationOptions &options) {
  int64_t S = step.getStages(), W = step.getWorkers();
  CostAttr cost = step.getCostOrDefault();
  ResolvedPriority priority = resolvePriority(step);
  // Key rows of every job (width = the key's results), ranked below.
  size_t keyWidth = priority.key ? priority.key.getNumResults() : 1;
  std::vector<int64_t> keys;
  keys.reserve(step.getBody().front().getOperations().size() * keyWidth);
  SmallVector<int64_t, 4> row;

  // The cap: the options win over the step's `cap`.
  MemoryCapAttr stepCap = step.getMemoryCapAttr();
  if (stepCap && (noMemoryCap || memoryCap > 0 || memoryCapBytes > 0 ||
                  stepCap.isNone()))
    stepCap = {};
  bool useBytes =
      memoryCapBytes > 0 || (memoryCap == 0 && stepCap && stepCap.getInBytes());
  int64_t actBytes = cost.getActBytes();
  if (useBytes && actBytes == 0)
    return step.emitOpError("a cap in bytes needs the cost's 'act' size");

  llvm::DenseMap<Operation *, uint32_t> index;
  index.reserve(step.getBody().front().getOperations().size());
  bool allOrdered = true;
  graph.numWorkers = W;
  graph.predBegin.assign(1, 0);
  // The forward (s, b) whose activation a backward (or, when split, its
  // weight-gradient job) frees: keyed by (s, b).
  llvm::DenseMap<std::pair<int64_t, int64_t>, uint32_t> forwardOf;
  bool split = cost.isSplitBackward();
  std::vector<uint32_t> preds;
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    std::optional<int64_t> worker = job.getComputeWorker();
    if (!worker)
      return job->emitOpError()
             << describeJob(job)
             << " has no compute worker: run --sched-place first";
    int64_t s = job.getStageIndex(), b = job.getMicrobatchIndex();
    Direction d = job.getDirection();
    sim::Job simJob;
    simJob.worker = *worker;
    simJob.duration = cost.getDuration(s, d);
    row.clear();
    if (priority.key)
      evaluatePriorityKey(priority.key, S, s, b, d, row);
    else // A static order ranks jobs by their place in it.
      row.push_back(job.getOrderIndex().value_or(0));
    keys.insert(keys.end(), row.begin(), row.end());
    if (d == Direction::Forward) {
      simJob.acquire = useBytes ? actBytes : 1;
      simJob.acquireBytes = actBytes;
    }
    bool freesActivation =
        (d == Direction::Backward && !split) || d == Direction::BackwardWeight;
    if (freesActivation) {
      auto it = forwardOf.find({s, b});
      simJob.releases = it == forwardOf.end() ? -1 : it->second;
    }
    preds.clear();
    for (Value operand : op.getOperands())
      if (Operation *producer = operand.getDefiningOp())
        preds.push_back(index.lookup(producer));
    uint32_t id = graph.addJob(simJob, preds);
    index[&op] = id;
    if (d == Direction::Forward)
      forwardOf[{s, b}] = id;
    jobs.push_back(job);
    allOrdered &= job.getOrderIndex().has_value();
  }

  std::vector<int64_t> ranks = sim::rankKeys(keys, keyWidth);
  for (auto [id, rank] : llvm::enumerate(ranks))
    graph.jobs[id].priority = rank;

  options.transferTime = transferTime;
  if (memoryCapBytes > 0) {
    options.memoryCap.assign(W, memoryCapBytes);
  } else if (memoryCap > 0) {
    options.memoryCap.assign(W, memoryCap);
  } else if (stepCap) {
    SmallVector<int64_t> caps = stepCap.perWorker(W);
    options.memoryCap.assign(caps.begin(), caps.end());
  }

  // Replay an explicit order (an imported schedule) unless asked not to.
  if (allOrdered && !reorder && !jobs.empty()) {
    graph.order.assign(W, {});
    // Orders are positions; sort each worker's jobs by them.
    for (auto [id, job] : llvm::enumerate(jobs))
      graph.order[*job.getComputeWorker()].push_back(id);
    for (auto &list : graph.order)
      llvm::sort(list, [&](uint32_t a, uint32_t b) {
        return *jobs[a].getOrderIndex() < *jobs[b].getOrderIndex();
      });
  }
  return success();
}

void SchedSimulate::runOnOperation() {
  StepOp step = getOperation();
  if (step.isSpec())
    return;
  sim::JobGraph graph;
  SmallVector<JobOpInterface> jobs;
  sim::SimulationOptions options;
  if (failed(buildGraph(step, graph, jobs, options)))
    return signalPassFailure();

  sim::SimulationResult result = sim::simulate(graph, options);
  if (!result.timeline) {
    InFlightDiagnostic diag = step.emitOpError()
                              << "cannot be scheduled: " << result.error;
    for (uint32_t id : result.blockedJobs)
      if (id < jobs.size())
        diag.attachNote(jobs[id]->getLoc())
            << describeJob(jobs[id]) << " is stuck";
    return signalPassFailure();
  }

  // The scheduler's result is checked independently before it is written.
  if (std::string error = sim::verifyTimeline(graph, options, *result.timeline);
      !error.empty()) {
    step.emitOpError() << "simulated timeline is invalid: " << error;
    return signalPassFailure();
  }

  const sim::Timeline &timeline = *result.timeline;
  for (auto [id, job] : llvm::enumerate(jobs)) {
    job.setOrderIndex(timeline.position[id]);
    job.setTimes(timeline.start[id], timeline.end[id]);
  }
}
