//===- StepPhases.h - the phases of a step as library calls -----*- C++ -*-===//
//
// The bodies of --sched-expand, --sched-place and --sched-simulate as
// functions, so that a pass that tries many steps (--sched-search) runs
// exactly what the passes run, without a pass manager per candidate.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_STEPPHASES_H
#define PIPESCHED_TRANSFORMS_STEPPHASES_H

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Scheduling/Partition.h"
#include "pipesched/Transforms/LayerFile.h"

#include "llvm/ADT/SmallVector.h"

namespace pipesched {

/// A step pass given a spec (a step without jobs) is an error that names
/// the passes to run first, never a silent exit 0.
inline llvm::LogicalResult requireJobs(sched::StepOp step,
                                       llvm::StringRef pass,
                                       llvm::StringRef runFirst) {
  if (!step.isSpec())
    return llvm::success();
  return step.emitOpError() << "has no jobs yet: " << pass << " needs "
                            << runFirst << " first";
}

/// --sched-partition on a spec: groups the file's layers into the step's S
/// stages (`method`; within `memoryLimitBytes` per stage when > 0) and
/// writes the per-stage cost and `layers`. Errors name `fileName`.
llvm::LogicalResult partitionStep(sched::StepOp step, const LayerFile &file,
                                  llvm::StringRef fileName,
                                  int64_t memoryLimitBytes,
                                  scheduling::PartitionMethod method);

/// --sched-expand on a spec: writes the strategy's cap (where the step keeps
/// the strategy's priority and states none) and materializes the jobs.
/// Fails with a located error past `maxJobs` jobs.
llvm::LogicalResult expandStep(sched::StepOp step, int64_t maxJobs);

/// --sched-place: evaluates the placement maps on every job that lacks a
/// worker and writes a static order's positions.
llvm::LogicalResult placeStep(sched::StepOp step);

/// What --sched-simulate's options change of the step's own settings.
struct SimulationOverrides {
  int64_t transferTime = -1;  ///< < 0: the cost's `transfer`
  int64_t memoryCap = 0;      ///< > 0: activations per worker
  int64_t memoryCapBytes = 0; ///< > 0: bytes per worker
  bool noMemoryCap = false;
  bool reorder = false; ///< schedule by priority even if every job has `order`
};

/// A placed step as the list scheduler's problem: one simulation job per
/// job op, except that an overlapped forward and the backward (and weight
/// half) after it form one, led by the forward.
struct SimulationInput {
  scheduling::JobGraph graph;
  scheduling::SimulationOptions options;
  llvm::SmallVector<llvm::SmallVector<sched::JobOpInterface, 1>> members;
};

/// Builds the problem --sched-simulate solves; fails with a located error.
llvm::LogicalResult buildSimulationInput(sched::StepOp step,
                                         const SimulationOverrides &overrides,
                                         SimulationInput &input);

/// Writes a verified timeline of `input` into its job ops, as
/// --sched-simulate does: each job's `order` and `at start to end`.
void applySimulation(const SimulationInput &input,
                     const scheduling::Timeline &timeline);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_STEPPHASES_H
