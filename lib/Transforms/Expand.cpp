//===- Expand.cpp - materialize the job graph of a step spec --------------===//

#include "pipesched/Dialect/Sched/SchedGraph.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

#include "llvm/ADT/STLExtras.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDEXPAND
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace pipesched::sched;

/// Writes the strategy's memory cap into `step` as `cap`, where the step
/// keeps the strategy's own priority and states no cap: the cap belongs to
/// that order, and a cap the IR does not show would constrain another one.
static void fillStrategyCap(StepOp step) {
  StrategyAttrInterface strategy = step.getStrategyAttr();
  if (!strategy || step.getMemoryCapAttr())
    return;
  if (auto priority = step.getPriorityAttr()) {
    auto named = mlir::dyn_cast<PriorityPolicyAttr>(priority);
    if (!named || named.getValue() != strategy.getDefaultPriority())
      return;
  }
  int64_t S = step.getStages(), B = step.getMicrobatches(),
          W = step.getWorkers();
  llvm::SmallVector<int64_t> caps;
  for (int64_t w = 0; w < W; ++w)
    caps.push_back(strategy.getMemoryCap(S, B, W, w));
  if (llvm::any_of(caps, [](int64_t cap) { return cap < 1; }))
    return;
  if (llvm::all_equal(caps))
    caps.resize(1);
  step.setMemoryCapAttr(
      MemoryCapAttr::get(step.getContext(), caps, /*inBytes=*/false));
}

llvm::LogicalResult pipesched::expandStep(StepOp step, int64_t maxJobs) {
  // The verifier guarantees the product does not overflow.
  int64_t jobs =
      step.getStages() * step.getMicrobatches() * step.getJobsPerPair();
  if (jobs > maxJobs)
    return step.emitOpError()
           << "would expand into " << jobs << " jobs, more than max-jobs = "
           << maxJobs << " (--sched-expand=max-jobs=N raises the limit)";
  fillStrategyCap(step);
  buildJobGraph(step);
  return llvm::success();
}

namespace {
struct SchedExpand : pipesched::impl::SchedExpandBase<SchedExpand> {
  using Base::Base;
  void runOnOperation() override {
    StepOp step = getOperation();
    if (step.isSpec() && failed(pipesched::expandStep(step, maxJobs)))
      signalPassFailure();
  }
};
} // namespace
