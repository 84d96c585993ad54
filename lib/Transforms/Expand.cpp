//===- Expand.cpp - materialize the job graph of a step spec --------------===//

#include "pipesched/Dialect/Sched/SchedGraph.h"
#include "pipesched/Transforms/Passes.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDEXPAND
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

namespace {
struct SchedExpand : pipesched::impl::SchedExpandBase<SchedExpand> {
  void runOnOperation() override {
    pipesched::sched::StepOp step = getOperation();
    if (step.isSpec())
      pipesched::sched::buildJobGraph(step);
  }
};
} // namespace
