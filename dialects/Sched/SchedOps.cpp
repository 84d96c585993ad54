//===- SchedOps.cpp - sched dialect operations ----------------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Dialect/Sched/SchedScheme.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace pipesched::sched;

#define GET_OP_CLASSES
#include "pipesched/Dialect/Sched/SchedOps.cpp.inc"

static StringRef jobKindName(Direction d) {
  switch (d) {
  case Direction::Forward:
    return "forward";
  case Direction::Backward:
    return "backward";
  case Direction::BackwardWeight:
    return "backward_weight";
  }
  llvm_unreachable("unknown direction");
}

static std::string describeJobAt(int64_t s, int64_t b, Direction d) {
  return (jobKindName(d) + " (s=" + Twine(s) + ", b=" + Twine(b) + ")").str();
}

std::string pipesched::sched::describeJob(JobOpInterface job) {
  return describeJobAt(job.getStageIndex(), job.getMicrobatchIndex(),
                       job.getDirection());
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

CostAttr StepOp::getCostOrDefault() {
  if (CostAttr cost = getCostAttr())
    return cost;
  return CostAttr::getDefault(getContext());
}

void StepOp::getStagePreds(int64_t s, SmallVectorImpl<int64_t> &preds) {
  preds.clear();
  if (StageGraphAttr graph = getStageGraphAttr()) {
    for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
      if (dst == s)
        preds.push_back(src);
  } else if (s > 0) {
    preds.push_back(s - 1);
  }
}

void StepOp::getStageSuccs(int64_t s, SmallVectorImpl<int64_t> &succs) {
  succs.clear();
  if (StageGraphAttr graph = getStageGraphAttr()) {
    for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
      if (src == s)
        succs.push_back(dst);
  } else if (s + 1 < getStages()) {
    succs.push_back(s + 1);
  }
}

Block &StepOp::getOrCreateBody() {
  if (getBody().empty())
    getBody().push_back(new Block());
  return getBody().front();
}

/// Dense index of job (s, b, d) in a step with B microbatches and
/// `perPair` jobs per (stage, microbatch).
static int64_t jobIndex(int64_t numMicrobatches, int64_t perPair, int64_t s,
                        int64_t b, Direction d) {
  return (s * numMicrobatches + b) * perPair + static_cast<int64_t>(d);
}

/// Checks an ordered job against the other jobs of its worker: one job per
/// position, and a job after every input made on the same worker.
static LogicalResult verifyWorkerOrder(
    JobOpInterface job,
    llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> &slots) {
  std::optional<int64_t> worker = job.getComputeWorker(),
                         order = job.getOrderIndex();
  if (!worker || !order)
    return success();
  auto [it, inserted] = slots.try_emplace({*worker, *order}, job);
  if (!inserted) {
    InFlightDiagnostic diag =
        job->emitOpError() << describeJob(job) << " and "
                           << describeJob(cast<JobOpInterface>(it->second))
                           << " both take position " << *order
                           << " on worker " << *worker;
    diag.attachNote(it->second->getLoc()) << "the other job is here";
    return diag;
  }
  for (Value operand : job->getOperands()) {
    auto producer = operand.getDefiningOp<JobOpInterface>();
    if (!producer || producer.getComputeWorker() != worker ||
        !producer.getOrderIndex() || *producer.getOrderIndex() < *order)
      continue;
    InFlightDiagnostic diag =
        job->emitOpError() << describeJob(job) << " runs at position "
                           << *order << " on worker " << *worker
                           << ", not after its input " << describeJob(producer)
                           << " at position " << *producer.getOrderIndex();
    diag.attachNote(producer->getLoc()) << "the input is made here";
    return diag;
  }
  return success();
}

LogicalResult StepOp::verifyRegions() {
  int64_t numStages = getStages(), numMicrobatches = getMicrobatches();
  int64_t perPair = getJobsPerPair(), numJobs = 0;
  if (llvm::MulOverflow(numStages, numMicrobatches, numJobs) ||
      llvm::MulOverflow(numJobs, perPair, numJobs))
    return emitOpError("stages * microbatches is too large");

  auto emitError = [&] { return emitOpError(); };
  if (StageGraphAttr graph = getStageGraphAttr())
    for (int64_t dst : graph.getTargets())
      if (dst >= numStages)
        return emitOpError() << "stage graph names stage " << dst
                             << ", outside [0, " << numStages << ")";
  if (auto strategy = getStrategyAttr())
    if (failed(strategy.verifyShape(numStages, numMicrobatches, getWorkers(),
                                    emitError)))
      return failure();
  if (auto map = getComputeMapAttr())
    if (failed(verifyPlacementMap(map.getValue(), "compute", emitError)))
      return failure();
  if (auto map = getWeightsMapAttr())
    if (failed(verifyPlacementMap(map.getValue(), "weights", emitError)))
      return failure();

  CostAttr cost = getCostOrDefault();
  for (auto [key, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"fwd", cost.getFwd()},
        {"bwd", cost.getBwd()},
        {"bwd_w", cost.getBwdWeight()}}) {
    if (values.size() > 1 && static_cast<int64_t>(values.size()) != numStages)
      return emitOpError() << "cost '" << key << "' lists " << values.size()
                           << " durations for " << numStages << " stages";
  }
  if (isSpec())
    return success();

  // Position of every job in the block, by dense job index. Job verifiers
  // have already checked ranges and edges; this checks the graph as a whole.
  llvm::DenseMap<int64_t, std::pair<unsigned, Operation *>> position;
  position.reserve(getBody().front().getOperations().size());
  // (worker, position) of every ordered job: a worker runs one job per slot.
  llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> slots;
  unsigned index = 0;
  for (Operation &op : getBody().front()) {
    auto job = dyn_cast<JobOpInterface>(op);
    if (!job)
      return op.emitOpError("is not a job and cannot appear in a step");
    if (failed(verifyWorkerOrder(job, slots)))
      return failure();
    int64_t key = jobIndex(numMicrobatches, perPair, job.getStageIndex(),
                           job.getMicrobatchIndex(), job.getDirection());
    auto [it, inserted] = position.try_emplace(key, index++, &op);
    if (!inserted) {
      InFlightDiagnostic diag =
          op.emitOpError() << describeJob(job) << " is defined twice";
      diag.attachNote(it->second.second->getLoc()) << "first defined here";
      return diag;
    }
  }

  for (auto &[key, entry] : position) {
    auto job = cast<JobOpInterface>(entry.second);
    if (job.getDirection() != Direction::Backward)
      continue;
    auto fwd = position.find(key - 1);
    if (fwd != position.end() && fwd->second.first > entry.first) {
      InFlightDiagnostic diag = job->emitOpError()
                                << describeJob(job)
                                << " appears before its forward";
      diag.attachNote(fwd->second.second->getLoc()) << "forward is here";
      return diag;
    }
  }

  if (!getPartial() && static_cast<int64_t>(position.size()) != numJobs) {
    for (int64_t s = 0; s < numStages; ++s)
      for (int64_t b = 0; b < numMicrobatches; ++b)
        for (int64_t d = 0; d < perPair; ++d)
          if (!position.count(
                  jobIndex(numMicrobatches, perPair, s, b, static_cast<Direction>(d))))
            return emitOpError() << "is missing "
                                 << describeJobAt(s, b, static_cast<Direction>(d))
                                 << " (mark the step 'partial' to allow an "
                                    "incomplete graph)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Jobs
//===----------------------------------------------------------------------===//

/// Checks the fields every job shares: ranges against the enclosing step.
static LogicalResult verifyJobCommon(JobOpInterface job) {
  auto step = job->getParentOfType<StepOp>();
  if (job.getStageIndex() >= step.getStages())
    return job->emitOpError() << "stage " << job.getStageIndex()
                              << " is out of range [0, " << step.getStages()
                              << ")";
  if (job.getMicrobatchIndex() >= step.getMicrobatches())
    return job->emitOpError()
           << "microbatch " << job.getMicrobatchIndex()
           << " is out of range [0, " << step.getMicrobatches() << ")";
  for (auto [name, worker] :
       {std::pair<StringRef, std::optional<int64_t>>{"compute",
                                                     job.getComputeWorker()},
        {"weights", job.getWeightsWorker()}})
    if (worker && *worker >= step.getWorkers())
      return job->emitOpError()
             << describeJob(job) << " has " << name << " worker " << *worker
             << " outside [0, " << step.getWorkers() << ")";
  return success();
}

/// Checks that `operands` are exactly the outputs of the jobs
/// (stages[i], b, d), in order, or empty in a partial step.
static LogicalResult verifyEdges(JobOpInterface job, ValueRange operands,
                                 StringRef role, ArrayRef<int64_t> stages,
                                 int64_t b, Direction d) {
  bool partial = job->getParentOfType<StepOp>().getPartial();
  if (operands.empty() && (partial || stages.empty()))
    return success();
  auto expected = [&] {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::interleaveComma(stages, os,
                          [&](int64_t s) { os << describeJobAt(s, b, d); });
    return text;
  };
  if (stages.empty())
    return job->emitOpError()
           << describeJob(job) << " takes no " << role << " (no stage feeds stage "
           << job.getStageIndex() << "), got " << operands.size();
  if (operands.size() != stages.size())
    return job->emitOpError()
           << describeJob(job) << " expects " << stages.size() << " " << role
           << (stages.size() == 1 ? "" : "s") << " from " << expected()
           << ", got " << operands.size();
  for (auto [operand, s] : llvm::zip(operands, stages)) {
    auto producer = operand.getDefiningOp<JobOpInterface>();
    if (producer && producer.getStageIndex() == s &&
        producer.getMicrobatchIndex() == b && producer.getDirection() == d)
      continue;
    InFlightDiagnostic diag = job->emitOpError()
                              << describeJob(job) << " expects its " << role
                              << " from " << describeJobAt(s, b, d) << ", got ";
    if (producer)
      diag << "the output of " << describeJob(producer);
    else
      diag << "a value that no job produces";
    return diag;
  }
  return success();
}

Direction ForwardOp::getDirection() { return Direction::Forward; }

LogicalResult ForwardOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  SmallVector<int64_t> preds;
  getOperation()->getParentOfType<StepOp>().getStagePreds(getStage(), preds);
  return verifyEdges(job, getInputs(), "activation", preds, getMicrobatch(),
                     Direction::Forward);
}

Direction BackwardOp::getDirection() { return Direction::Backward; }

LogicalResult BackwardOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  int64_t s = getStage(), b = getMicrobatch();
  auto step = getOperation()->getParentOfType<StepOp>();
  // A stage that feeds no other computes the loss from its own output.
  SmallVector<int64_t> stages;
  step.getStageSuccs(s, stages);
  LogicalResult grads =
      stages.empty()
          ? verifyEdges(job, getGrads(), "gradient", {s}, b,
                        Direction::Forward)
          : verifyEdges(job, getGrads(), "gradient", stages, b,
                        Direction::Backward);
  if (failed(grads))
    return failure();
  step.getStagePreds(s, stages);
  return verifyEdges(job, getActs(), "activation", stages, b,
                     Direction::Forward);
}

Direction BackwardWeightOp::getDirection() { return Direction::BackwardWeight; }

LogicalResult BackwardWeightOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  if (!getOperation()->getParentOfType<StepOp>().getCostOrDefault()
           .isSplitBackward())
    return emitOpError() << describeJob(job)
                         << " needs a split backward: give the step's cost a "
                            "'bwd_w' duration";
  Value input = getInput();
  return verifyEdges(job, input ? ValueRange(input) : ValueRange(), "input",
                     {getStage()}, getMicrobatch(), Direction::Backward);
}
