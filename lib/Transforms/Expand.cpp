//===- Expand.cpp - materialize the job graph of a step spec --------------===//

#include "pipesched/Dialect/Sched/SchedGraph.h"
#include "pipesched/Transforms/Passes.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDEXPAND
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

namespace {
struct SchedExpand : pipesched::impl::SchedExpandBase<SchedExpand> {
  using Base::Base;
  void runOnOperation() override {
    pipesched::sched::StepOp step = getOperation();
    if (!step.isSpec())
      return;
    // The verifier guarantees the product does not overflow.
    int64_t jobs =
        step.getStages() * step.getMicrobatches() * step.getJobsPerPair();
    int64_t limit = maxJobs;
    if (jobs > limit) {
      step.emitOpError() << "would expand into " << jobs
                         << " jobs, more than max-jobs = " << limit
                         << " (--sched-expand=max-jobs=N raises the limit)";
      return signalPassFailure();
    }
    pipesched::sched::buildJobGraph(step);
  }
};
} // namespace
