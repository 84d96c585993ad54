//===- SchedGraph.cpp - building the job graph of a step ------------------===//

#include "pipesched/Dialect/Sched/SchedGraph.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace pipesched::sched;

void pipesched::sched::buildJobGraph(StepOp step) {
  int64_t numStages = step.getStages(), numMicrobatches = step.getMicrobatches();
  Location loc = step.getLoc();
  bool split = step.getCostOrDefault().isSplitBackward();

  // Stage adjacency, computed once: edges go from lower to higher stages,
  // so forwards in stage order and backwards in reverse are topological.
  SmallVector<SmallVector<int64_t, 2>> preds(numStages), succs(numStages);
  SmallVector<int64_t> scratch;
  for (int64_t s = 0; s < numStages; ++s) {
    step.getStagePreds(s, scratch);
    preds[s].assign(scratch.begin(), scratch.end());
    step.getStageSuccs(s, scratch);
    succs[s].assign(scratch.begin(), scratch.end());
  }

  auto builder = OpBuilder::atBlockEnd(&step.getOrCreateBody());
  SmallVector<Value> output(numStages), grad(numStages);
  SmallVector<Value, 4> inputs, grads;
  for (int64_t b = 0; b < numMicrobatches; ++b) {
    for (int64_t s = 0; s < numStages; ++s) {
      inputs.clear();
      for (int64_t p : preds[s])
        inputs.push_back(output[p]);
      output[s] = ForwardOp::create(builder, loc, s, b, inputs);
    }
    for (int64_t s = numStages - 1; s >= 0; --s) {
      grads.clear();
      if (succs[s].empty())
        grads.push_back(output[s]);
      for (int64_t t : succs[s])
        grads.push_back(grad[t]);
      inputs.clear();
      for (int64_t p : preds[s])
        inputs.push_back(output[p]);
      grad[s] = BackwardOp::create(builder, loc, s, b, grads,
                                   inputs);
      if (split)
        BackwardWeightOp::create(builder, loc, s, b, grad[s]);
    }
  }
}
