//===- SplitRanks.cpp - one static program per worker ---------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

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

/// Drops the step-level placement of an op that moves into a rank.
static void dropPlacement(Operation *op) {
  for (StringRef name : {"worker", "order", "group", "compute"})
    op->removeAttr(name);
  if (auto recv = dyn_cast<RecvOp>(op))
    recv.getSourceMutable().clear();
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
      std::optional<uint64_t> group;
      if (auto attr = op->getAttrOfType<IntegerAttr>("group"))
        group = attr.getInt();
      size_t end = i + 1;
      while (group && end < program.size()) {
        auto next = program[end].second->getAttrOfType<IntegerAttr>("group");
        if (!next || next.getInt() != static_cast<int64_t>(*group))
          break;
        ++end;
      }
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
