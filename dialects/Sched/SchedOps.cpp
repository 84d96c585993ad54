//===- SchedOps.cpp - sched dialect operations ----------------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Dialect/Sched/MapBounds.h"
#include "pipesched/Dialect/Sched/SchedScheme.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace pipesched::sched;

/// An affine map, refused when its text's constants overflow 64 bits:
/// MLIR folds them as it parses, wrapping (MapBounds.h).
template <typename AttrT>
static ParseResult parseMapLiteral(OpAsmParser &parser, AttrT &map) {
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseAttribute(map))
    return failure();
  const char *end = parser.getCurrentLocation().getPointer();
  StringRef text(start.getPointer(), end - start.getPointer());
  if (std::optional<std::string> overflow = checkMapLiteral(text))
    return parser.emitError(start) << *overflow;
  return success();
}

static void printMapLiteral(OpAsmPrinter &printer, Operation *,
                            AffineMapAttr map) {
  printer.printAttribute(map);
}

/// `<name>` (a named policy) or an affine map (a lexicographic key).
static ParseResult parsePriority(OpAsmParser &parser, Attribute &priority) {
  if (failed(parser.parseOptionalLess()))
    return parseMapLiteral(parser, priority);
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name) || parser.parseGreater())
    return failure();
  std::optional<PriorityPolicy> policy = symbolizePriorityPolicy(name);
  if (!policy)
    return parser.emitError(loc) << "unknown priority '" << name << "'";
  priority = PriorityPolicyAttr::get(parser.getContext(), *policy);
  return success();
}

static void printPriority(OpAsmPrinter &printer, Operation *,
                          Attribute priority) {
  if (auto policy = dyn_cast<PriorityPolicyAttr>(priority))
    printer << '<' << stringifyPriorityPolicy(policy.getValue()) << '>';
  else
    printer.printAttribute(priority);
}

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
  case Direction::Scan:
    return "scan";
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

FailureOr<StepOp> pipesched::sched::getSingleStep(Operation *op) {
  SmallVector<StepOp> steps;
  op->walk([&](StepOp step) { steps.push_back(step); });
  if (steps.size() != 1)
    return op->emitError() << "expected exactly one sched.step to export, got "
                           << steps.size();
  return steps.front();
}

CostAttr StepOp::getCostOrDefault() {
  if (CostAttr cost = getCostAttr())
    return cost;
  return CostAttr::getDefault(getContext());
}

void pipesched::sched::stagePreds(StageGraphAttr graph, int64_t numStages,
                                  int64_t s, SmallVectorImpl<int64_t> &preds) {
  preds.clear();
  if (graph) {
    for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
      if (dst == s)
        preds.push_back(src);
  } else if (s > 0) {
    preds.push_back(s - 1);
  }
}

void pipesched::sched::stageSuccs(StageGraphAttr graph, int64_t numStages,
                                  int64_t s, SmallVectorImpl<int64_t> &succs) {
  succs.clear();
  if (graph) {
    for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
      if (src == s)
        succs.push_back(dst);
  } else if (s + 1 < numStages) {
    succs.push_back(s + 1);
  }
}

void StepOp::getStagePreds(int64_t s, SmallVectorImpl<int64_t> &preds) {
  stagePreds(getStageGraphAttr(), getStages(), s, preds);
}

void StepOp::getStageSuccs(int64_t s, SmallVectorImpl<int64_t> &succs) {
  stageSuccs(getStageGraphAttr(), getStages(), s, succs);
}

StepShape pipesched::sched::getEnclosingShape(Operation *op) {
  for (Operation *parent = op; parent; parent = parent->getParentOp()) {
    if (auto step = dyn_cast<StepOp>(parent))
      return {step.getStages(), step.getMicrobatches(), step.getWorkers(),
              step.getCostOrDefault()};
    if (auto program = dyn_cast<ProgramOp>(parent))
      return {program.getStages(), program.getMicrobatches(),
              program.getWorkers(), program.getCost()};
  }
  return {};
}

void pipesched::sched::collectStepsAndPrograms(
    Operation *op, SmallVectorImpl<StepOp> &steps,
    SmallVectorImpl<ProgramOp> &programs) {
  // Neither nests, so their bodies (millions of jobs) are not visited.
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (auto program = dyn_cast<ProgramOp>(nested))
      programs.push_back(program);
    else if (auto step = dyn_cast<StepOp>(nested))
      steps.push_back(step);
    return isa<ProgramOp, StepOp>(nested) ? WalkResult::skip()
                                          : WalkResult::advance();
  });
}

FailureOr<ProgramOp> pipesched::sched::getSingleProgram(Operation *op) {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (programs.empty() && !steps.empty())
    return steps.front().emitOpError(
        "has no rank programs to write: lower it first with "
        "`pipeline-opt --pipeline-lower` (or compile the spec in one command "
        "with `pipeline-compile`)");
  if (programs.size() != 1)
    return op->emitError() << "expected exactly one sched.program to export, got "
                           << programs.size();
  return programs.front();
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

/// A readable name of any program op: the job, or the op's name.
static std::string describeOp(Operation *op) {
  if (auto job = dyn_cast<JobOpInterface>(op))
    return describeJob(job);
  return ("'" + op->getName().getStringRef() + "'").str();
}

/// Checks an ordered job of a step against the other jobs of its worker: one
/// job per position, and a job after every input made on the same worker.
static LogicalResult verifyWorkerOrder(
    JobOpInterface op,
    llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> &slots) {
  std::optional<int64_t> worker = op.getComputeWorker(),
                         order = op.getOrderIndex();
  if (!worker || !order)
    return success();
  auto [it, inserted] = slots.try_emplace({*worker, *order}, op);
  if (!inserted) {
    InFlightDiagnostic diag =
        op->emitOpError() << describeOp(op) << " and "
                          << describeOp(it->second) << " both take position "
                          << *order << " on worker " << *worker;
    diag.attachNote(it->second->getLoc()) << "the other op is here";
    return diag;
  }
  for (Value operand : op->getOperands()) {
    auto producer = operand.getDefiningOp<JobOpInterface>();
    if (!producer || producer.getComputeWorker() != worker ||
        !producer.getOrderIndex() || *producer.getOrderIndex() < *order)
      continue;
    InFlightDiagnostic diag =
        op->emitOpError() << describeOp(op) << " runs at position " << *order
                          << " on worker " << *worker
                          << ", not after its input " << describeOp(producer)
                          << " at position " << *producer.getOrderIndex();
    diag.attachNote(producer->getLoc()) << "the input is made here";
    return diag;
  }
  return success();
}

/// Checks a program: one `sched.rank` per worker, in order.
static LogicalResult verifyRanks(ProgramOp program) {
  int64_t expected = 0;
  for (Operation &op : program.getBody().front()) {
    auto rank = dyn_cast<RankOp>(op);
    if (!rank)
      return op.emitOpError("cannot sit beside rank programs in a program");
    if (rank.getRank() != expected)
      return rank.emitOpError()
             << "is rank " << rank.getRank() << ", expected rank " << expected
             << " (one rank per worker, in order)";
    ++expected;
  }
  if (expected != program.getWorkers())
    return program.emitOpError() << "has " << expected << " rank programs for "
                                 << program.getWorkers() << " workers";
  return success();
}

/// Whether `body` holds the jobs of a scanned backward (BPPSA): then each
/// (stage, microbatch) has a forward and a weight gradient, no backward,
/// and the scan jobs come besides.
static bool isScanned(Block &body) {
  return llvm::any_of(body, [](Operation &op) {
    auto job = dyn_cast<JobOpInterface>(op);
    return job && job.getDirection() == Direction::Scan;
  });
}

/// The jobs (s, b, d) a step or program must hold, per (s, b).
static SmallVector<Direction, 3> expectedDirections(bool scanned, bool split) {
  if (scanned)
    return {Direction::Forward, Direction::BackwardWeight};
  if (split)
    return {Direction::Forward, Direction::Backward, Direction::BackwardWeight};
  return {Direction::Forward, Direction::Backward};
}

/// The layer count per stage of a step or program: one positive count per
/// stage.
static LogicalResult verifyLayerCounts(Operation *op,
                                       std::optional<ArrayRef<int64_t>> layers,
                                       int64_t numStages) {
  if (!layers)
    return success();
  if (static_cast<int64_t>(layers->size()) != numStages)
    return op->emitOpError() << "lists " << layers->size()
                             << " layer counts for " << numStages << " stages";
  for (auto [s, count] : llvm::enumerate(*layers))
    if (count < 1)
      return op->emitOpError() << "layers[" << s << "] = " << count
                               << ": every stage needs at least one layer";
  return success();
}

/// Checks a job against the shape of its graph: no backward beside a scan.
static LogicalResult verifyJobKind(JobOpInterface job, bool scanned) {
  if (scanned && job.getDirection() == Direction::Backward)
    return job->emitOpError()
           << describeJob(job)
           << " cannot appear beside the jobs of a scanned backward (BPPSA "
              "replaces every backward)";
  return success();
}

/// Every stage a tie names exists.
static LogicalResult verifyTiedStages(Operation *op, TiedAttr tied,
                                      int64_t numStages) {
  if (!tied)
    return success();
  for (auto [g, group] : llvm::enumerate(tied.getGroups()))
    for (int64_t s : group)
      if (s >= numStages)
        return op->emitOpError() << "tied group " << g << " names stage " << s
                                 << ", outside [0, " << numStages << ")";
  return success();
}

/// The step's attributes against its shape: the stage graph, layers, ties,
/// strategy, placement and priority maps, memory cap and per-stage costs.
static LogicalResult verifyStepAttributes(StepOp step) {
  int64_t numStages = step.getStages(), numMicrobatches = step.getMicrobatches();
  auto emitError = [&] { return step.emitOpError(); };
  if (StageGraphAttr graph = step.getStageGraphAttr())
    for (int64_t dst : graph.getTargets())
      if (dst >= numStages)
        return step.emitOpError() << "stage graph names stage " << dst
                             << ", outside [0, " << numStages << ")";
  if (failed(verifyLayerCounts(step, step.getLayers(), numStages)) ||
      failed(verifyTiedStages(step, step.getTiedAttr(), numStages)))
    return failure();
  if (auto strategy = step.getStrategyAttr())
    if (failed(strategy.verifyShape(numStages, numMicrobatches, step.getWorkers(),
                                    emitError)))
      return failure();
  if (auto map = step.getComputeMapAttr())
    if (failed(verifyPlacementMap(map.getValue(), "compute", numStages,
                                  numMicrobatches, emitError)))
      return failure();
  if (auto map = step.getWeightsMapAttr())
    if (failed(verifyPlacementMap(map.getValue(), "weights", numStages,
                                  numMicrobatches, emitError)))
      return failure();
  if (auto key = dyn_cast_if_present<AffineMapAttr>(step.getPriorityAttr()))
    if (failed(verifyPriorityKey(key.getValue(), numStages,
                                 numMicrobatches, emitError)))
      return failure();
  if (MemoryCapAttr cap = step.getMemoryCapAttr()) {
    size_t n = cap.getLimits().size();
    if (n > 1 && static_cast<int64_t>(n) != step.getWorkers())
      return step.emitOpError() << "cap lists " << n << " values for "
                           << step.getWorkers() << " workers";
    if (cap.getInBytes() && !cap.isNone() &&
        step.getCostOrDefault().getActBytes() == 0)
      return step.emitOpError("cap in bytes needs the cost's 'act' size");
  }

  if (NodesAttr nodes = step.getNodesAttr()) {
    size_t n = nodes.getMap().size();
    if (n && static_cast<int64_t>(n) != step.getWorkers())
      return step.emitOpError() << "nodes map lists " << n << " nodes for "
                                << step.getWorkers() << " workers";
  }

  CostAttr cost = step.getCostOrDefault();
  for (auto [key, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"fwd", cost.getFwd()},
        {"bwd", cost.getBwd()},
        {"bwd_w", cost.getBwdWeight()},
        {"fwd_bwd", cost.getFwdBwd()},
        {"optimizer", cost.getOptimizer()}}) {
    if (values.size() > 1 && static_cast<int64_t>(values.size()) != numStages)
      return step.emitOpError() << "cost '" << key << "' lists " << values.size()
                           << " durations for " << numStages << " stages";
  }
  return success();
}

/// The jobs of a step as a whole: each (s, b, d) once, a worker's slots
/// distinct, a backward after its forward, every job present unless the
/// step is partial. Job verifiers have already checked ranges and edges.
static LogicalResult verifyStepJobs(StepOp step, bool scanned, int64_t perPair,
                                    ArrayRef<Direction> directions,
                                    int64_t numJobs) {
  int64_t numStages = step.getStages(), numMicrobatches = step.getMicrobatches();
  // Position of every job, by dense job index.
  llvm::DenseMap<int64_t, std::pair<unsigned, Operation *>> position;
  position.reserve(step.getBody().front().getOperations().size());
  // (worker, position) of every ordered op: a worker runs one op per slot.
  llvm::DenseMap<std::pair<int64_t, int64_t>, Operation *> slots;
  unsigned index = 0;
  for (Operation &op : step.getBody().front()) {
    auto job = dyn_cast<JobOpInterface>(op);
    if (!job)
      return op.emitOpError("is not a job and cannot appear in a step");
    if (failed(verifyWorkerOrder(job, slots)) ||
        failed(verifyJobKind(job, scanned)))
      return failure();
    if (job.getDirection() == Direction::Scan)
      continue; // several per (s, b); their edges are checked by each op
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

  if (!step.getPartial() && static_cast<int64_t>(position.size()) != numJobs) {
    for (int64_t s = 0; s < numStages; ++s)
      for (int64_t b = 0; b < numMicrobatches; ++b)
        for (Direction d : directions)
          if (!position.count(jobIndex(numMicrobatches, perPair, s, b, d)))
            return step.emitOpError() << "is missing "
                                 << describeJobAt(s, b, d)
                                 << " (mark the step 'partial' to allow an "
                                    "incomplete graph)";
  }
  return success();
}

LogicalResult StepOp::verifyRegions() {
  int64_t numStages = getStages(), numMicrobatches = getMicrobatches();
  bool scanned = !isSpec() && isScanned(getBody().front());
  SmallVector<Direction, 3> directions =
      expectedDirections(scanned, getCostOrDefault().isSplitBackward());
  // Dense job keys index (s, b, d) with 3 directions in a scanned step.
  int64_t perPair = scanned ? 3 : getJobsPerPair(), numJobs = 0;
  if (llvm::MulOverflow(numStages, numMicrobatches, numJobs) ||
      llvm::MulOverflow(numJobs, perPair, numJobs))
    return emitOpError("stages * microbatches is too large");
  numJobs = numStages * numMicrobatches * int64_t(directions.size());
  // Every worker gets a program: a million ranks is past any machine.
  constexpr int64_t kMaxWorkers = int64_t(1) << 20;
  if (getWorkers() > kMaxWorkers)
    return emitOpError() << "has " << getWorkers()
                         << " workers, more than the supported " << kMaxWorkers;

  if (failed(verifyStepAttributes(*this)))
    return failure();
  if (isSpec())
    return success();
  return verifyStepJobs(*this, scanned, perPair, directions, numJobs);
}

//===----------------------------------------------------------------------===//
// Jobs
//===----------------------------------------------------------------------===//

/// Checks the fields every job shares: ranges against the enclosing step.
static LogicalResult verifyJobCommon(JobOpInterface job) {
  StepShape step = getEnclosingShape(job);
  if (job.getStageIndex() >= step.stages)
    return job->emitOpError() << "stage " << job.getStageIndex()
                              << " is out of range [0, " << step.stages << ")";
  if (job.getMicrobatchIndex() >= step.microbatches)
    return job->emitOpError()
           << "microbatch " << job.getMicrobatchIndex()
           << " is out of range [0, " << step.microbatches << ")";
  for (auto [name, worker] :
       {std::pair<StringRef, std::optional<int64_t>>{"compute",
                                                     job.getComputeWorker()},
        {"weights", job.getWeightsWorker()}})
    if (worker && *worker >= step.workers)
      return job->emitOpError()
             << describeJob(job) << " has " << name << " worker " << *worker
             << " outside [0, " << step.workers << ")";
  return success();
}

/// Checks that `operands` are exactly the outputs of the jobs
/// (stages[i], b, d), in order, or empty in a partial step.
static LogicalResult verifyEdges(JobOpInterface job, ValueRange operands,
                                 StringRef role, ArrayRef<int64_t> stages,
                                 int64_t b, Direction d) {
  // In a rank program the producers live on other ranks: the deadlock
  // verifier and the step's job count check the program instead.
  if (!isa<StepOp>(job->getParentOp()))
    return success();
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

/// Checks that `acts` are what the job's stage's forward reads: the outputs
/// of the forwards of its predecessors on its microbatch. In a rank program
/// the producers live on other ranks: the deadlock verifier and the
/// program's job count check the program instead.
static LogicalResult verifyForwardInputs(JobOpInterface job, ValueRange acts) {
  auto step = dyn_cast<StepOp>(job->getParentOp());
  if (!step)
    return success();
  SmallVector<int64_t> preds;
  step.getStagePreds(job.getStageIndex(), preds);
  return verifyEdges(job, acts, "activation", preds, job.getMicrobatchIndex(),
                     Direction::Forward);
}

Direction ForwardOp::getDirection() { return Direction::Forward; }

LogicalResult ForwardOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  return verifyForwardInputs(job, getInputs());
}

Direction BackwardOp::getDirection() { return Direction::Backward; }

LogicalResult BackwardOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  int64_t s = getStage(), b = getMicrobatch();
  auto step = dyn_cast<StepOp>(getOperation()->getParentOp());
  if (!step)
    return success();
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
  return verifyForwardInputs(job, getActs());
}

Direction BackwardWeightOp::getDirection() { return Direction::BackwardWeight; }

/// The scan interval [lo, hi] a scan job's output covers in a step of
/// `numStages` stages (element 0 is G, element k >= 1 is J_{S-k}), or none
/// for another producer.
static std::optional<std::pair<int64_t, int64_t>>
scanInterval(Operation *producer, int64_t numStages) {
  if (!producer)
    return std::nullopt;
  if (isa<LossGradOp>(producer))
    return std::make_pair(int64_t(0), int64_t(0));
  if (auto jacobian = dyn_cast<JacobianOp>(producer))
    return std::make_pair(numStages - jacobian.getStage(),
                          numStages - jacobian.getStage());
  if (auto combine = dyn_cast<CombineOp>(producer))
    return std::make_pair(combine.getLo(), combine.getHi());
  return std::nullopt;
}

LogicalResult BackwardWeightOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  if (getInput() && (getGrad() || !getActs().empty()))
    return emitOpError() << describeJob(job)
                         << " reads either its backward ('after') or a "
                            "scanned gradient ('grad', 'act'), not both";
  if (!getGrad()) {
    if (!getActs().empty())
      return emitOpError() << describeJob(job)
                           << " reads activations only with a 'grad'";
    if (!getEnclosingShape(getOperation()).cost.isSplitBackward())
      return emitOpError() << describeJob(job)
                           << " needs a split backward: give the step's cost a "
                              "'bwd_w' duration";
    Value input = getInput();
    return verifyEdges(job, input ? ValueRange(input) : ValueRange(), "input",
                       {getStage()}, getMicrobatch(), Direction::Backward);
  }
  // The weight gradient of a scanned backward: the gradient of its stage's
  // output (G at the last stage, else the product that ends the prefix
  // [0, S-1-s]) and its forward's activations.
  auto step = dyn_cast<StepOp>(getOperation()->getParentOp());
  if (!step)
    return success();
  int64_t S = step.getStages(), s = getStage(), b = getMicrobatch();
  Operation *producer = getGrad().getDefiningOp();
  auto interval = scanInterval(producer, S);
  auto scanJob = dyn_cast_if_present<JobOpInterface>(producer);
  if (!interval || interval->first != 0 || interval->second != S - 1 - s ||
      scanJob.getMicrobatchIndex() != b) {
    InFlightDiagnostic diag = emitOpError()
                              << describeJob(job)
                              << " expects the gradient of its output, the "
                                 "scan's prefix [0, "
                              << (S - 1 - s) << "] of microbatch " << b
                              << ", got ";
    if (scanJob)
      diag << "the output of " << describeJob(scanJob);
    else
      diag << "a value that no scan job produces";
    return diag;
  }
  return verifyForwardInputs(job, getActs());
}

Direction LossGradOp::getDirection() { return Direction::Scan; }

LogicalResult LossGradOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  auto step = dyn_cast<StepOp>(getOperation()->getParentOp());
  if (!step)
    return success();
  if (getStage() != step.getStages() - 1)
    return emitOpError() << describeJob(job)
                         << ": the loss gradient is taken at the last stage, "
                         << step.getStages() - 1;
  return verifyEdges(job, getInput(), "output", {getStage()}, getMicrobatch(),
                     Direction::Forward);
}

Direction JacobianOp::getDirection() { return Direction::Scan; }

LogicalResult JacobianOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  if (getStage() == 0)
    return emitOpError() << describeJob(job)
                         << ": stage 0's Jacobian is never scanned (no "
                            "gradient flows into its input)";
  return verifyForwardInputs(job, getAct());
}

Direction CombineOp::getDirection() { return Direction::Scan; }

LogicalResult CombineOp::verify() {
  auto job = cast<JobOpInterface>(getOperation());
  if (failed(verifyJobCommon(job)))
    return failure();
  int64_t S = getEnclosingShape(getOperation()).stages;
  int64_t lo = getLo(), hi = getHi();
  if (lo >= hi || hi >= S)
    return emitOpError() << "interval [" << lo << ", " << hi
                         << "] is not a product of at least two elements "
                            "of the scan [0, "
                         << S - 1 << "]";
  if (getStage() != S - hi)
    return emitOpError() << "covering [" << lo << ", " << hi
                         << "] has stage " << S - hi << ", not "
                         << getStage();
  if ((getProduct() == Product::JV) != (lo == 0))
    return emitOpError() << "covering [" << lo << ", " << hi << "] is a "
                         << (lo == 0 ? "jv" : "jj")
                         << " product (jv exactly when it starts at G)";
  // Operands are checked where their producers are visible: in a step.
  if (!isa<StepOp>(getOperation()->getParentOp()))
    return success();
  auto left = scanInterval(getLhs().getDefiningOp(), S);
  auto right = scanInterval(getRhs().getDefiningOp(), S);
  auto sameBatch = [&](Value v) {
    return cast<JobOpInterface>(v.getDefiningOp()).getMicrobatchIndex() ==
           getMicrobatch();
  };
  if (!left || !right || !sameBatch(getLhs()) || !sameBatch(getRhs()) ||
      left->first != lo || right->second != hi ||
      left->second + 1 != right->first)
    return emitOpError()
           << "covering [" << lo << ", " << hi
           << "] must join the scan outputs of microbatch " << getMicrobatch()
           << " covering [" << lo << ", m] and [m + 1, " << hi
           << "], in that order";
  return success();
}

//===----------------------------------------------------------------------===//
// Program ops
//===----------------------------------------------------------------------===//

/// The rank whose program holds `op`.
static int64_t rankOf(Operation *op) {
  return op->getParentOfType<RankOp>().getRank();
}

/// Checks the workers a communication op names: within [0, W).
static LogicalResult verifyWorkers(Operation *op,
                                   ArrayRef<std::pair<StringRef, int64_t>>
                                       workers) {
  int64_t numWorkers = getEnclosingShape(op).workers;
  for (auto [role, worker] : workers)
    if (worker >= numWorkers)
      return op->emitOpError() << role << " " << worker << " is outside [0, "
                               << numWorkers << ")";
  return success();
}

static LogicalResult verifyStage(Operation *op, int64_t stage) {
  int64_t stages = getEnclosingShape(op).stages;
  if (stage >= stages)
    return op->emitOpError() << "stage " << stage << " is out of range [0, "
                             << stages << ")";
  return success();
}

/// Checks a point-to-point op: a peer other than itself.
static LogicalResult verifyPointToPoint(Operation *op, int64_t stage,
                                        int64_t peer) {
  if (failed(verifyWorkers(op, {{"peer", peer}})) ||
      failed(verifyStage(op, stage)))
    return failure();
  if (rankOf(op) == peer)
    return op->emitOpError() << "sends to or receives from its own worker "
                             << peer;
  return success();
}

static LogicalResult verifyMembers(Operation *op, int64_t stage,
                                   ArrayRef<int64_t> members) {
  if (failed(verifyStage(op, stage)))
    return failure();
  if (members.size() < 2)
    return op->emitOpError("needs at least two members");
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i] <= members[i - 1])
      return op->emitOpError("members must be sorted and distinct");
  // A negative member would index outside any table of ranks.
  if (members.front() < 0)
    return op->emitOpError() << "member " << members.front()
                             << " is negative";
  int64_t self = rankOf(op);
  if (!llvm::is_contained(members, self))
    return op->emitOpError() << "runs on rank " << self
                             << ", which is not one of its members";
  return verifyWorkers(op, {{"member", members.back()}});
}

LogicalResult SendOp::verify() {
  return verifyPointToPoint(*this, getStage(), getPeer());
}
LogicalResult RecvOp::verify() {
  return verifyPointToPoint(*this, getStage(), getPeer());
}
LogicalResult SendWeightsOp::verify() {
  return verifyPointToPoint(*this, getStage(), getPeer());
}
LogicalResult FetchWeightsOp::verify() {
  return verifyPointToPoint(*this, getStage(), getPeer());
}
LogicalResult ReleaseWeightsOp::verify() {
  return verifyStage(*this, getStage());
}
LogicalResult AllReduceGradOp::verify() {
  return verifyMembers(*this, getStage(), getMembers());
}
LogicalResult ReduceGradOp::verify() {
  if (failed(verifyMembers(*this, getStage(), getMembers())))
    return failure();
  if (!llvm::is_contained(getMembers(), getRoot()))
    return emitOpError() << "root " << getRoot() << " is not a member";
  return success();
}
LogicalResult OptimizerStepOp::verify() {
  return verifyStage(*this, getStage());
}
LogicalResult TiedGradOp::verify() {
  auto program = getOperation()->getParentOfType<ProgramOp>();
  TiedAttr tied = program ? program.getTiedAttr() : TiedAttr();
  int64_t groups = tied ? int64_t(tied.getSizes().size()) : 0;
  if (getTie() >= groups)
    return emitOpError() << "names tied group " << getTie()
                         << ", but the program has " << groups;
  ArrayRef<int64_t> members = getMembers();
  if (members.empty())
    return emitOpError("needs at least one member");
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i] <= members[i - 1])
      return emitOpError("members must be sorted and distinct");
  if (members.front() < 0)
    return emitOpError() << "member " << members.front() << " is negative";
  int64_t self = rankOf(*this);
  if (!llvm::is_contained(members, self))
    return emitOpError() << "runs on rank " << self
                         << ", which is not one of its members";
  return verifyWorkers(*this, {{"member", members.back()}});
}

LogicalResult GroupOp::verify() {
  for (Operation &op : getBody().front().without_terminator())
    if (!isa<SendOp, RecvOp, SendWeightsOp, FetchWeightsOp>(op))
      return op.emitOpError("cannot be part of a communication group");
  return success();
}

LogicalResult RankOp::verify() {
  auto step = cast<ProgramOp>(getOperation()->getParentOp());
  if (getRank() >= step.getWorkers())
    return emitOpError() << "rank " << getRank() << " is outside [0, "
                         << step.getWorkers() << ")";
  ArrayRef<int64_t> owns = getOwns();
  for (size_t i = 0; i < owns.size(); ++i) {
    if (owns[i] >= step.getStages())
      return emitOpError() << "owns stage " << owns[i] << ", outside [0, "
                           << step.getStages() << ")";
    if (i && owns[i] <= owns[i - 1])
      return emitOpError("owned stages must be sorted and distinct");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

LogicalResult ProgramOp::verifyRegions() {
  int64_t numStages = getStages(), numMicrobatches = getMicrobatches();
  bool scanned = false;
  walk([&](JobOpInterface job) {
    scanned = job.getDirection() == Direction::Scan;
    return scanned ? WalkResult::interrupt() : WalkResult::advance();
  });
  SmallVector<Direction, 3> directions =
      expectedDirections(scanned, getCost().isSplitBackward());
  int64_t perPair = scanned || getCost().isSplitBackward() ? 3 : 2, numJobs = 0;
  if (llvm::MulOverflow(numStages, numMicrobatches, numJobs) ||
      llvm::MulOverflow(numJobs, perPair, numJobs))
    return emitOpError("stages * microbatches is too large");
  numJobs = numStages * numMicrobatches * int64_t(directions.size());
  if (failed(verifyLayerCounts(*this, getLayers(), numStages)) ||
      failed(verifyTiedStages(*this, getTiedAttr(), numStages)) ||
      failed(verifyRanks(*this)))
    return failure();
  // Every job runs exactly once across the ranks.
  llvm::DenseMap<int64_t, Operation *> seen;
  WalkResult result = walk([&](JobOpInterface job) {
    if (failed(verifyJobKind(job, scanned)))
      return WalkResult::interrupt();
    if (job.getDirection() == Direction::Scan)
      return WalkResult::advance();
    int64_t key = jobIndex(numMicrobatches, perPair, job.getStageIndex(),
                           job.getMicrobatchIndex(), job.getDirection());
    auto [it, inserted] = seen.try_emplace(key, job);
    if (inserted)
      return WalkResult::advance();
    InFlightDiagnostic diag = job->emitOpError()
                              << describeJob(job) << " is defined twice";
    diag.attachNote(it->second->getLoc()) << "first defined here";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  if (!getPartial() && static_cast<int64_t>(seen.size()) != numJobs)
    return emitOpError() << "runs " << seen.size() << " of the step's "
                         << numJobs << " jobs";
  return success();
}
