//===- SplitRanks.cpp - one static program per worker ---------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDSPLITRANKS
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedSplitRanks
    : pipesched::impl::SchedSplitRanksBase<SchedSplitRanks> {
  void runOnOperation() override;
};
} // namespace

/// Drops the step-level placement of an op that moves into a rank (through
/// the typed property setters: no attribute-name lookups per op).
static void dropPlacement(Operation *op) {
  llvm::TypeSwitch<Operation *>(op)
      .Case<ForwardOp, BackwardOp, BackwardWeightOp>([](auto job) {
        job.setComputeAttr({});
        job.setOrderAttr({});
      })
      .Case<SendOp, RecvOp, SendWeightsOp, FetchWeightsOp, ReleaseWeightsOp,
            AllReduceGradOp, ReduceGradOp, OptimizerStepOp>([](auto comm) {
        comm.setWorkerAttr({});
        comm.setOrderAttr({});
        comm.setGroupAttr({});
      });
  if (auto recv = dyn_cast<RecvOp>(op))
    recv.getSourceMutable().clear();
}

/// The communication group of a point-to-point op in a step, if any.
static std::optional<int64_t> groupOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case<SendOp, RecvOp, SendWeightsOp, FetchWeightsOp>(
          [](auto comm) -> std::optional<int64_t> {
            if (IntegerAttr group = comm.getGroupAttr())
              return group.getInt();
            return std::nullopt;
          })
      .Default([](Operation *) { return std::nullopt; });
}

void SchedSplitRanks::runOnOperation() {
  StepOp step = getOperation();
  if (step.isSpec() || step.isLowered())
    return;
  int64_t numWorkers = step.getWorkers();
  Block &body = step.getBody().front();

  // Every op's worker and position; the stages each worker owns.
  SmallVector<SmallVector<std::pair<int64_t, Operation *>>> programs(
      numWorkers);
  SmallVector<SmallVector<int64_t>> owns(numWorkers);
  for (Operation &op : body) {
    auto program = cast<ProgramOpInterface>(op);
    std::optional<int64_t> worker = program.getProgramWorker(),
                           order = program.getProgramOrder();
    if (!worker || !order) {
      op.emitOpError("has no place in a worker's program: run "
                     "--sched-simulate and --sched-insert-comm first");
      return signalPassFailure();
    }
    programs[*worker].push_back({*order, &op});
    if (auto job = dyn_cast<JobOpInterface>(op))
      if (std::optional<int64_t> owner = job.getWeightsWorker())
        owns[*owner].push_back(job.getStageIndex());
  }

  OpBuilder builder(&getContext());
  builder.setInsertionPointToEnd(&body);
  SmallVector<RankOp> ranks;
  for (int64_t w = 0; w < numWorkers; ++w) {
    llvm::sort(owns[w]);
    owns[w].erase(llvm::unique(owns[w]), owns[w].end());
    auto rank = RankOp::create(builder, step.getLoc(), builder.getI64IntegerAttr(w),
                               builder.getDenseI64ArrayAttr(owns[w]));
    rank.getBody().push_back(new Block());
    ranks.push_back(rank);
  }

  for (int64_t w = 0; w < numWorkers; ++w) {
    auto &program = programs[w];
    llvm::sort(program, [](auto &a, auto &b) { return a.first < b.first; });
    Block &rankBody = ranks[w].getBody().front();
    for (size_t i = 0; i < program.size();) {
      Operation *op = program[i].second;
      std::optional<int64_t> group = groupOf(op);
      size_t end = i + 1;
      while (group && end < program.size() &&
             groupOf(program[end].second) == group)
        ++end;
      if (!group) {
        dropPlacement(op);
        op->moveBefore(&rankBody, rankBody.end());
        i = end;
        continue;
      }
      // A group: its receives' results become the group's results.
      SmallVector<Value> received;
      for (size_t j = i; j < end; ++j)
        if (auto recv = dyn_cast<RecvOp>(program[j].second))
          received.push_back(recv.getOutput());
      builder.setInsertionPointToEnd(&rankBody);
      auto groupOp = GroupOp::create(
          builder, op->getLoc(),
          SmallVector<Type>(received.size(), sched::TensorType::get(&getContext())));
      Block *groupBody = new Block();
      groupOp.getBody().push_back(groupBody);
      for (size_t j = i; j < end; ++j) {
        dropPlacement(program[j].second);
        program[j].second->moveBefore(groupBody, groupBody->end());
      }
      builder.setInsertionPointToEnd(groupBody);
      YieldOp::create(builder, op->getLoc(), received);
      for (auto [value, result] : llvm::zip(received, groupOp.getResults()))
        value.replaceUsesWithIf(result, [&](OpOperand &use) {
          return use.getOwner()->getParentOp() != groupOp;
        });
      i = end;
    }
  }
}
