//===- Expand.cpp - materialize the job graph of a step spec --------------===//

#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDEXPAND
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedExpand : pipesched::impl::SchedExpandBase<SchedExpand> {
  void runOnOperation() override {
    StepOp step = getOperation();
    if (!step.isSpec())
      return;
    int64_t numStages = step.getStages(), numMicrobatches = step.getMicrobatches();
    MLIRContext *ctx = &getContext();
    Location loc = step.getLoc();
    Type tensor = sched::TensorType::get(ctx);

    // Uniqued attributes are interned once, not once per job.
    Builder attrs(ctx);
    SmallVector<IntegerAttr> index;
    for (int64_t i = 0, e = std::max(numStages, numMicrobatches); i < e; ++i)
      index.push_back(attrs.getI64IntegerAttr(i));

    bool split = step.getCostOrDefault().isSplitBackward();
    auto builder = OpBuilder::atBlockEnd(&step.getOrCreateBody());
    SmallVector<Value> activation(numStages);
    for (int64_t b = 0; b < numMicrobatches; ++b) {
      Value input;
      for (int64_t s = 0; s < numStages; ++s) {
        activation[s] = input;
        input = ForwardOp::create(builder, loc, tensor, index[s], index[b],
                                  input ? ValueRange(input) : ValueRange(),
                                  IntegerAttr(), IntegerAttr(), IntegerAttr());
      }
      Value grad = input;
      for (int64_t s = numStages - 1; s >= 0; --s) {
        Value act = activation[s];
        grad = BackwardOp::create(builder, loc, tensor, index[s], index[b],
                                  ValueRange(grad),
                                  act ? ValueRange(act) : ValueRange(),
                                  IntegerAttr(), IntegerAttr(), IntegerAttr());
        if (split)
          BackwardWeightOp::create(builder, loc, index[s], index[b], grad,
                                   IntegerAttr(), IntegerAttr(), IntegerAttr());
      }
    }
  }
};
} // namespace
