//===- Pipelines.cpp - registered pass pipelines --------------------------===//

#include "pipesched/Transforms/Pipelines.h"

#include "pipesched/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace pipesched;

static std::unique_ptr<Pass> verifyPhase(Phase phase) {
  SchedVerifyPhaseOptions options;
  options.phase = phase;
  return createSchedVerifyPhase(options);
}

void pipesched::buildSchedulePipeline(OpPassManager &pm,
                                      const LowerOptions &options) {
  // On every step: the job graph, placed and simulated.
  OpPassManager &step = pm.nest<sched::StepOp>();
  if (!options.layers.empty()) {
    SchedPartitionOptions partition;
    partition.layers = options.layers;
    partition.memoryLimitBytes = options.memoryLimitBytes;
    partition.partition = options.partition;
    step.addPass(createSchedPartition(partition));
  }
  if (!options.costs.empty()) {
    SchedCalibrateOptions calibrate;
    calibrate.costs = options.costs;
    step.addPass(createSchedCalibrate(calibrate));
  }
  SchedExpandOptions expand;
  expand.maxJobs = options.maxJobs;
  step.addPass(createSchedExpand(expand));
  step.addPass(createSchedPlace());
  if (options.bppsaWidth > 0) {
    SchedBppsaOptions bppsa;
    bppsa.width = options.bppsaWidth;
    bppsa.maxJobs = options.maxJobs;
    step.addPass(createSchedBppsa(bppsa));
  }
  SchedSimulateOptions simulate;
  simulate.transferTime = options.transferTime;
  simulate.memoryCap = options.memoryCap;
  simulate.memoryCapBytes = options.memoryCapBytes;
  simulate.noMemoryCap = options.noMemoryCap;
  simulate.reorder = options.reorder;
  step.addPass(createSchedSimulate(simulate));
  pm.addPass(verifyPhase(Phase::Scheduled));
}

void pipesched::buildRanksPipeline(OpPassManager &pm,
                                   const LowerOptions &options) {
  // The module's steps become programs. The plan they are built from is
  // proven once, by --sched-lower-ranks (CommPlan::verify); the rank IR is
  // that plan written out, and --sched-verify-deadlock-free is for IR
  // written or edited by hand.
  SchedLowerRanksOptions ranks;
  ranks.prefetchDepth = options.prefetchDepth;
  ranks.verifyPlan = options.verify;
  pm.addPass(createSchedLowerRanks(ranks));
  pm.addPass(verifyPhase(Phase::Lowered));
}

void pipesched::buildLowerPipeline(OpPassManager &pm,
                                   const LowerOptions &options) {
  buildSchedulePipeline(pm, options);
  buildRanksPipeline(pm, options);
}

void pipesched::registerPipelines() {
  PassPipelineRegistration<LowerOptions>(
      "pipeline-schedule",
      "Phase 1: expand, place and simulate every step, then check that every "
      "job is placed and timed (--sched-verify-phase=phase=scheduled)",
      buildSchedulePipeline);
  PassPipelineRegistration<LowerOptions>(
      "pipeline-ranks",
      "Phase 2: turn every simulated step into a sched.program of rank "
      "programs proven deadlock-free: lower-ranks (which verifies its plan), "
      "verify-phase=lowered",
      buildRanksPipeline);
  PassPipelineRegistration<LowerOptions>(
      "pipeline-lower",
      "Lower step specs to verified per-rank programs: pipeline-schedule "
      "then pipeline-ranks",
      buildLowerPipeline);
}
