//===- CommProblem.cpp - a simulated step as a planning problem -----------===//

#include "pipesched/Transforms/CommProblem.h"

#include "pipesched/Dialect/Sched/SchedScheme.h"

#include "pipesched/Scheduling/Saturating.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

/// The problem's fields that hold for the whole step.
static void describeStep(StepOp step, int64_t prefetchDepth,
                         sch::CommProblem &p) {
  CostAttr cost = step.getCostOrDefault();
  p.numWorkers = static_cast<int32_t>(step.getWorkers());
  p.numStages = step.getStages();
  // Weight gradients come from the weight halves when the backward is split
  // or scanned (a scanned step has no backward).
  Block &jobs = step.getBody().front();
  bool weightHalves =
      cost.isSplitBackward() || llvm::any_of(jobs, [](Operation &op) {
        return isa<BackwardWeightOp>(op);
      });
  p.gradientJob = weightHalves ? sch::Direction::BackwardWeight
                               : sch::Direction::Backward;
  p.prefetchDepth = prefetchDepth;
  p.actBytes = cost.getActBytes();
  p.weightBytes = cost.getWeightBytes();
  if (TiedAttr tied = step.getTiedAttr())
    for (ArrayRef<int64_t> group : tied.getGroups())
      p.tiedGroups.emplace_back(group.begin(), group.end());
}

/// Appends the inputs of job `self` (its op `op`): its operands' producers,
/// or, for a weight half on another worker than its backward, that
/// backward's inputs (which it re-reads: those must travel to it, not the
/// backward's output, which a stage without predecessors does not even
/// have). Operands dominate their users: producers are already indexed.
static LogicalResult
addInputs(Operation &op, uint32_t self,
          const llvm::DenseMap<Operation *, uint32_t> &indexOf,
          StepCommProblem &result) {
  sch::CommProblem &p = result.problem;
  auto weightHalf = dyn_cast<BackwardWeightOp>(op);
  std::optional<uint32_t> backward;
  if (weightHalf && weightHalf.rereadsBackward()) {
    // A fragment without `after` has no backward to plan transfers for,
    // yet its program would name that backward's inputs.
    if (!weightHalf.getInput())
      return op.emitOpError()
             << describeJob(cast<JobOpInterface>(op))
             << " has no backward to re-read: a weight half of a partial "
                "step needs 'after' to be lowered";
    backward = indexOf.lookup(weightHalf.getInput().getDefiningOp());
  }
  bool remote = backward && p.jobs[*backward].worker != p.jobs[self].worker;
  result.readsRemoteBackward.push_back(remote);
  if (remote) {
    SmallVector<uint32_t, 4> reads(p.inputs.begin() + p.inputBegin[*backward],
                                   p.inputs.begin() + p.inputBegin[*backward + 1]);
    p.inputs.insert(p.inputs.end(), reads.begin(), reads.end());
  } else {
    for (Value operand : op.getOperands())
      p.inputs.push_back(indexOf.lookup(operand.getDefiningOp()));
  }
  p.inputBegin.push_back(static_cast<uint32_t>(p.inputs.size()));
  return success();
}

FailureOr<StepCommProblem> pipesched::buildCommProblem(StepOp step,
                                                       int64_t prefetchDepth) {
  StepCommProblem result;
  sch::CommProblem &p = result.problem;
  describeStep(step, prefetchDepth, p);
  Block &body = step.getBody().front();
  // The width of a scanned backward's Jacobians (what --sched-bppsa
  // recorded): a Jacobian message is that many activations.
  int64_t scanWidth = 1;
  if (auto scan = step->getAttrOfType<DictionaryAttr>("sched.bppsa"))
    if (auto width = scan.getAs<IntegerAttr>("width"))
      scanWidth = std::max<int64_t>(1, width.getInt());
  llvm::DenseMap<Operation *, uint32_t> indexOf;
  indexOf.reserve(body.getOperations().size());
  p.inputBegin.push_back(0);
  for (Operation &op : body) {
    auto job = cast<JobOpInterface>(op);
    std::optional<int64_t> worker = job.getComputeWorker(),
                           order = job.getOrderIndex(),
                           start = job.getStartTime(), end = job.getEndTime();
    if (!worker || !order || !start || !end)
      return job->emitOpError() << describeJob(job)
                                << " is not simulated: run --sched-place and "
                                   "--sched-simulate first";
    uint32_t self = static_cast<uint32_t>(p.jobs.size());
    indexOf[&op] = self;
    p.jobs.push_back({static_cast<int32_t>(*worker),
                      static_cast<int32_t>(job.getWeightsWorker().value_or(*worker)),
                      job.getStageIndex(), job.getMicrobatchIndex(),
                      toSchedulingDirection(job.getDirection()), *start, *end, *order,
                      /*outputBytes=*/-1});
    // A Jacobian travels as width rows per activation row (dense).
    auto combine = dyn_cast<CombineOp>(op);
    if (isa<JacobianOp>(op) || (combine && combine.getProduct() == Product::JJ))
      p.jobs.back().outputBytes = sch::saturatingMul(p.actBytes, scanWidth);
    if (failed(addInputs(op, self, indexOf, result)))
      return failure();
    result.jobs.push_back(job);
  }
  return result;
}

/// What the replay charges, from the step's cost.
static sch::ReplayCosts replayCostsOf(const StepCommProblem &input,
                                      CostAttr cost) {
  sch::ReplayCosts costs;
  // Only pairs run differently from their simulation.
  bool pairs = llvm::any_of(input.jobs, [](JobOpInterface job) {
    auto forward = dyn_cast<ForwardOp>(job.getOperation());
    return forward && forward.getOverlapped();
  });
  if (pairs)
    for (auto [i, planned] : llvm::enumerate(input.problem.jobs)) {
      Direction d = JobOpInterface(input.jobs[i]).getDirection();
      costs.durations.push_back(
          d == Direction::Scan ? double(planned.end - planned.start)
                               : double(cost.getDuration(planned.stage, d)));
    }
  costs.transfer = double(cost.getTransfer());
  if (cost.getBandwidth() > 0 && cost.hasTimeUnit()) {
    costs.latency = double(cost.getLatency());
    costs.perByte = 1e9 / double(cost.getBandwidth()) / double(cost.getTickNs());
  }
  if (cost.getReduce() > 0 && cost.getWeightBytes() > 0) {
    costs.reduce = double(cost.getReduce());
    costs.reduceBytes = cost.getWeightBytes();
  }
  if (!cost.getOptimizer().empty())
    for (int64_t s = 0; s < input.problem.numStages; ++s)
      costs.optimizer.push_back(double(cost.getOptimizerDuration(s)));
  return costs;
}

/// The link between the step's nodes, each figure the cost's unless the
/// nodes give their own.
static void setInterNodeLink(StepOp step, CostAttr cost,
                             sch::ReplayCosts &costs) {
  NodesAttr nodes = step.getNodesAttr();
  if (!nodes)
    return;
  costs.nodeOf = nodes.nodeOfWorkers(step.getWorkers());
  costs.interTransfer = double(nodes.getInterNodeTransfer(cost.getTransfer()));
  int64_t latency = nodes.getLatency() >= 0 ? nodes.getLatency()
                                            : cost.getLatency();
  int64_t bandwidth = nodes.getBandwidth() > 0 ? nodes.getBandwidth()
                                               : cost.getBandwidth();
  if (bandwidth > 0 && cost.hasTimeUnit()) {
    costs.interLatency = double(latency);
    costs.interPerByte = 1e9 / double(bandwidth) / double(cost.getTickNs());
  }
}

FailureOr<int64_t> pipesched::replayRankPrograms(StepOp step,
                                                 const StepCommProblem &input,
                                                 const sch::CommPlan &plan) {
  sch::ReplayCosts costs = replayCostsOf(input, step.getCostOrDefault());
  setInterNodeLink(step, step.getCostOrDefault(), costs);
  sch::ReplayResult replay = sch::replayPrograms(input.problem, plan, costs);
  if (std::string error = replay.verify(input.problem, plan, costs);
      !error.empty())
    return step.emitOpError() << "cannot replay the rank programs: " << error;
  return std::llround(replay.makespan);
}

FailureOr<PlannedStep> pipesched::planStep(StepOp step, int64_t prefetchDepth,
                                           bool verifyPlan,
                                           TimingScope *timing) {
  TimingScope none;
  TimingScope &root = timing ? *timing : none;
  TimingScope phase = root.nest("Build problem");
  FailureOr<StepCommProblem> input = buildCommProblem(step, prefetchDepth);
  if (failed(input))
    return failure();
  if (std::string error = input->problem.check(); !error.empty())
    return step.emitOpError() << "cannot plan communication: " << error;
  phase.stop();
  PlannedStep planned{std::move(*input), {}, 0, 0};
  for (const sch::PlannedJob &job : planned.input.problem.jobs)
    planned.makespan = std::max(planned.makespan, job.end);
  phase = root.nest("Plan communication");
  planned.plan = sch::planCommunication(planned.input.problem);
  phase.stop();
  if (verifyPlan) {
    phase = root.nest("Verify plan (deadlock-free)");
    if (std::string error = planned.plan.verify(planned.input.problem);
        !error.empty())
      return step.emitOpError() << "communication plan is invalid: " << error;
    phase.stop();
  }
  // The programs' own time: transfers as rendezvous, a sender waiting for
  // its receiver (what a calibrated cost predicts, docs/calibration.md).
  phase = root.nest("Replay programs");
  FailureOr<int64_t> replayed =
      replayRankPrograms(step, planned.input, planned.plan);
  if (failed(replayed))
    return failure();
  planned.replayed = *replayed;
  return planned;
}
