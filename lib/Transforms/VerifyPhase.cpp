//===- VerifyPhase.cpp - the check between phases of the lowering ---------===//

#include "pipesched/Transforms/Passes.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDVERIFYPHASE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedVerifyPhase
    : pipesched::impl::SchedVerifyPhaseBase<SchedVerifyPhase> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// A step of the scheduled phase: jobs, each placed, ordered and timed.
static LogicalResult verifyScheduled(StepOp step) {
  if (step.isSpec())
    return step.emitOpError(
        "is still a spec after the scheduling phase: run --sched-expand");
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    if (!job.getComputeWorker() || !job.getOrderIndex() ||
        !job.getStartTime() || !job.getEndTime())
      return job->emitOpError()
             << describeJob(job)
             << " is not placed and simulated after the scheduling phase";
  }
  return success();
}

void SchedVerifyPhase::runOnOperation() {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(getOperation(), steps, programs);
  for (StepOp step : steps) {
    if (phase == Phase::Lowered) {
      step.emitOpError("is left after the lowering phase: every step must "
                       "become a sched.program");
      return signalPassFailure();
    }
    if (failed(verifyScheduled(step)))
      return signalPassFailure();
  }
  markAllAnalysesPreserved();
}
