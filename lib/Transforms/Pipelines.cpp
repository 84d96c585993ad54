//===- Pipelines.cpp - registered pass pipelines --------------------------===//

#include "pipesched/Transforms/Pipelines.h"

#include "pipesched/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace pipesched;

void pipesched::buildLowerPipeline(OpPassManager &pm,
                                   const LowerOptions &options) {
  // Phase 1, on every step: the job graph, placed and simulated.
  OpPassManager &step = pm.nest<sched::StepOp>();
  SchedExpandOptions expand;
  expand.maxJobs = options.maxJobs;
  step.addPass(createSchedExpand(expand));
  step.addPass(createSchedPlace());
  SchedSimulateOptions simulate;
  simulate.transferTime = options.transferTime;
  simulate.memoryCap = options.memoryCap;
  simulate.memoryCapBytes = options.memoryCapBytes;
  simulate.noMemoryCap = options.noMemoryCap;
  simulate.reorder = options.reorder;
  step.addPass(createSchedSimulate(simulate));
  SchedVerifyPhaseOptions scheduled;
  scheduled.phase = Phase::Scheduled;
  pm.addPass(createSchedVerifyPhase(scheduled));
  // Phase 2: the module's steps become programs.
  SchedLowerRanksOptions ranks;
  ranks.prefetchDepth = options.prefetchDepth;
  ranks.verifyPlan = options.verify;
  pm.addPass(createSchedLowerRanks(ranks));
  SchedVerifyPhaseOptions lowered;
  lowered.phase = Phase::Lowered;
  pm.addPass(createSchedVerifyPhase(lowered));
  if (options.verify)
    pm.addPass(createSchedVerifyDeadlockFree());
}

void pipesched::registerPipelines() {
  PassPipelineRegistration<LowerOptions>(
      "pipeline-lower",
      "Lower step specs to verified per-rank programs: expand, place, "
      "simulate, lower-ranks, verify-deadlock-free",
      buildLowerPipeline);
}
