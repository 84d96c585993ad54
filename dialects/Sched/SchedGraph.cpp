//===- SchedGraph.cpp - building the job graph of a step ------------------===//

#include "pipesched/Dialect/Sched/SchedGraph.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace pipesched::sched;

void pipesched::sched::buildJobGraph(StepOp step) {
  int64_t numStages = step.getStages(), numMicrobatches = step.getMicrobatches();
  MLIRContext *ctx = step.getContext();
  Location loc = step.getLoc();
  bool split = step.getCostOrDefault().isSplitBackward();

  // Uniqued attributes are interned once, not once per job.
  Builder attrs(ctx);
  SmallVector<IntegerAttr> index;
  for (int64_t i = 0, e = std::max(numStages, numMicrobatches); i < e; ++i)
    index.push_back(attrs.getI64IntegerAttr(i));

  auto builder = OpBuilder::atBlockEnd(&step.getOrCreateBody());
  SmallVector<Value> activation(numStages);
  for (int64_t b = 0; b < numMicrobatches; ++b) {
    Value input;
    for (int64_t s = 0; s < numStages; ++s) {
      activation[s] = input;
      input = ForwardOp::create(builder, loc, index[s], index[b],
                                input ? ValueRange(input) : ValueRange());
    }
    Value grad = input;
    for (int64_t s = numStages - 1; s >= 0; --s) {
      Value act = activation[s];
      grad = BackwardOp::create(builder, loc, index[s], index[b],
                                ValueRange(grad),
                                act ? ValueRange(act) : ValueRange());
      if (split)
        BackwardWeightOp::create(builder, loc, index[s], index[b], grad);
    }
  }
}
