//===- LowerRanks.cpp - one static program per worker ---------------------===//
//
// A thin adapter: simulated step -> scheduling::CommProblem -> the
// communication plan (lib/Scheduling/CommPlan, checked before and verified
// after) -> one `sched.rank` per worker, built directly from the plan.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Transforms/CommProblem.h"

#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDLOWERRANKS
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

namespace {
struct SchedLowerRanks
    : pipesched::impl::SchedLowerRanksBase<SchedLowerRanks> {
  using Base::Base;
  void runOnOperation() override;
};

/// Builds the rank programs of a plan into a new `sched.program` that
/// replaces the step.
class RankBuilder {
public:
  RankBuilder(StepOp step, const StepCommProblem &input,
              const sch::CommPlan &plan)
      : step(step), input(input), plan(plan), builder(step.getContext()),
        tensorType(sched::TensorType::get(step.getContext())) {}
  /// Creates the program before the step, moves the jobs into its ranks and
  /// erases the step.
  void build(int64_t makespan, int64_t replayed);

private:
  void buildRank(int32_t worker, Block &body);
  /// Creates op `i` of a worker's program at the builder's insertion point.
  /// `received` collects (producer job, value) of the tensors received.
  void buildOp(int32_t worker, const sch::PlanOp &op,
               SmallVectorImpl<std::pair<uint32_t, Value>> &received);
  void moveJob(int32_t worker, uint32_t j);
  void buildTransfer(int32_t worker, const sch::PlanOp &op,
                     SmallVectorImpl<std::pair<uint32_t, Value>> &received);
  /// The value of job `job`'s output on `worker`.
  Value valueOn(int32_t worker, uint32_t job) const;

  StepOp step;
  const StepCommProblem &input;
  const sch::CommPlan &plan;
  OpBuilder builder;
  Type tensorType;
  /// Per worker: producer job -> the local value (its result or a receive).
  SmallVector<llvm::DenseMap<uint32_t, Value>> local;
};
} // namespace

Value RankBuilder::valueOn(int32_t worker, uint32_t job) const {
  return local[worker].lookup(job);
}

/// Moves job `j` into worker's rank, its operands the values there.
void RankBuilder::moveJob(int32_t worker, uint32_t j) {
  const sch::CommProblem &p = input.problem;
  JobOpInterface job = input.jobs[j];
  SmallVector<Value, 4> operands;
  for (uint32_t k = p.inputBegin[j]; k < p.inputBegin[j + 1]; ++k)
    operands.push_back(valueOn(worker, p.inputs[k]));
  // A weight half on another worker than its backward has that
  // backward's inputs as its problem inputs (CommProblem.cpp): received,
  // re-read by it, but no operand of its op, whose only operand is
  // `after` its backward on the same rank.
  bool rereads = input.readsRemoteBackward[j];
  // The job moves into its rank and keeps its fields but its worker and
  // position, implied by the rank and the region order.
  Operation *copy = job.getOperation();
  copy->moveBefore(builder.getInsertionBlock(),
                   builder.getInsertionPoint());
  if (rereads)
    cast<BackwardWeightOp>(copy).getInputMutable().clear();
  else
    copy->setOperands(operands);
  auto moved = cast<JobOpInterface>(copy);
  moved.setComputeWorker(std::nullopt);
  moved.setOrderIndex(std::nullopt);
  if (copy->getNumResults())
    local[worker][j] = copy->getResult(0);
}

/// A transfer: of weights, or of a tensor (a receive defines its value on
/// the worker, recorded in `received`).
void RankBuilder::buildTransfer(
    int32_t worker, const sch::PlanOp &op,
    SmallVectorImpl<std::pair<uint32_t, Value>> &received) {
  Location loc = step.getLoc();
  const sch::Message &m = plan.messages[op.index];
  bool send = op.kind == sch::PlanOp::Send;
  if (m.kind == sch::Message::Weights) {
    if (send)
      SendWeightsOp::create(builder, loc, m.stage, m.receiver,
                            m.tag, m.bytes);
    else
      FetchWeightsOp::create(builder, loc, m.stage, m.sender,
                             m.tag, m.bytes);
    return;
  }
  auto kind = TensorKindAttr::get(step.getContext(),
                                  m.kind == sch::Message::Activation
                                      ? TensorKind::Activation
                                  : m.kind == sch::Message::Gradient
                                      ? TensorKind::Gradient
                                      : TensorKind::Scan);
  if (send) {
    SendOp::create(builder, loc, valueOn(worker, m.producer), kind,
                   m.stage, m.microbatch, m.receiver,
                   m.tag, m.bytes);
    return;
  }
  auto recv = RecvOp::create(builder, loc, tensorType, kind, m.stage,
                             m.microbatch, m.sender, m.tag,
                             m.bytes);
  local[worker][m.producer] = recv.getOutput();
  received.push_back({m.producer, recv.getOutput()});
}

void RankBuilder::buildOp(
    int32_t worker, const sch::PlanOp &op,
    SmallVectorImpl<std::pair<uint32_t, Value>> &received) {
  Location loc = step.getLoc();
  switch (op.kind) {
  case sch::PlanOp::Job:
    moveJob(worker, op.index);
    return;
  case sch::PlanOp::Send:
  case sch::PlanOp::Recv:
    buildTransfer(worker, op, received);
    return;
  case sch::PlanOp::ReleaseWeights:
    ReleaseWeightsOp::create(builder, loc, op.index);
    return;
  case sch::PlanOp::Collective: {
    const sch::Reduction &r = plan.reductions[op.index];
    SmallVector<int64_t> members(r.members.begin(), r.members.end());
    auto membersAttr = builder.getDenseI64ArrayAttr(members);
    if (r.isAllReduce())
      AllReduceGradOp::create(builder, loc, r.stage, membersAttr,
                              r.bytes);
    else
      ReduceGradOp::create(builder, loc, r.stage, r.owners.front(),
                           membersAttr, r.bytes);
    return;
  }
  case sch::PlanOp::OptimizerStep:
    OptimizerStepOp::create(builder, loc,
                            plan.reductions[op.index].stage);
    return;
  case sch::PlanOp::TiedGrad: {
    const sch::TiedReduction &t = plan.tied[op.index];
    SmallVector<int64_t> members(t.members.begin(), t.members.end());
    TiedGradOp::create(builder, loc, t.tie,
                       builder.getDenseI64ArrayAttr(members), t.bytes);
    return;
  }
  }
}

void RankBuilder::buildRank(int32_t worker, Block &body) {
  const std::vector<sch::PlanOp> &program = plan.programs[worker];
  SmallVector<std::pair<uint32_t, Value>> received;
  for (size_t i = 0; i < program.size();) {
    builder.setInsertionPointToEnd(&body);
    int32_t group = program[i].group;
    if (group < 0) {
      buildOp(worker, program[i++], received);
      continue;
    }
    // A group: its receives' results become the group's results.
    size_t end = i;
    size_t receives = 0;
    for (; end < program.size() && program[end].group == group; ++end)
      receives += program[end].kind == sch::PlanOp::Recv &&
                  plan.messages[program[end].index].kind !=
                      sch::Message::Weights;
    auto groupOp = GroupOp::create(builder, step.getLoc(),
                                   SmallVector<Type>(receives, tensorType));
    Block *groupBody = new Block();
    groupOp.getBody().push_back(groupBody);
    builder.setInsertionPointToEnd(groupBody);
    received.clear();
    for (; i < end; ++i)
      buildOp(worker, program[i], received);
    SmallVector<Value> values;
    for (auto &entry : received)
      values.push_back(entry.second);
    YieldOp::create(builder, step.getLoc(), values);
    // Consumers after the group read its results.
    for (auto [entry, result] : llvm::zip(received, groupOp.getResults()))
      local[worker][entry.first] = result;
  }
}

void RankBuilder::build(int64_t makespan, int64_t replayed) {
  builder.setInsertionPoint(step);
  auto program = ProgramOp::create(
      builder, step.getLoc(), step.getStages(), step.getMicrobatches(),
      step.getWorkers(), step.getStageGraphAttr(), step.getTiedAttr(),
      step.getCostOrDefault(), step.getLayersAttr(), makespan,
      builder.getI64IntegerAttr(replayed), /*partial=*/UnitAttr(),
      step.getSymNameAttr());
  Block *body = new Block();
  program.getBody().push_back(body);
  local.resize(plan.programs.size());
  for (size_t w = 0; w < plan.programs.size(); ++w) {
    SmallVector<int64_t> owns(plan.owns[w].begin(), plan.owns[w].end());
    builder.setInsertionPointToEnd(body);
    auto rank = RankOp::create(builder, step.getLoc(), int64_t(w),
                               builder.getDenseI64ArrayAttr(owns));
    Block *rankBody = new Block();
    rank.getBody().push_back(rankBody);
    buildRank(static_cast<int32_t>(w), *rankBody);
  }
  // Every job moved into its rank: the step is empty.
  step.erase();
}

/// Lowers one step; false after a diagnostic.
static bool lowerStep(StepOp step, int64_t prefetchDepth, bool verifyPlan) {
  FailureOr<PlannedStep> planned = planStep(step, prefetchDepth, verifyPlan);
  if (failed(planned))
    return false;
  RankBuilder(step, planned->input, planned->plan)
      .build(planned->makespan, planned->replayed);
  return true;
}

void SchedLowerRanks::runOnOperation() {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(getOperation(), steps, programs);
  for (StepOp step : steps)
    if (failed(requireJobs(step, "--sched-lower-ranks",
                           "--pipeline-schedule")) ||
        !lowerStep(step, prefetchDepth, verifyPlan))
      return signalPassFailure();
}
