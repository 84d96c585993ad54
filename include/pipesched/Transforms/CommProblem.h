//===- CommProblem.h - a simulated step as a planning problem ---*- C++ -*-===//
//
// The one conversion from a placed, simulated `sched.step` to the
// dialect-free scheduling::CommProblem, shared by --sched-lower-ranks (which
// builds rank programs from the plan) and --sched-stats (which reports the
// plan's traffic): both see the same transfers by construction.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_COMMPROBLEM_H
#define PIPESCHED_TRANSFORMS_COMMPROBLEM_H

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/CommPlan.h"
#include "pipesched/Scheduling/ProgramReplay.h"
#include "mlir/Support/Timing.h"

namespace pipesched {

struct StepCommProblem {
  scheduling::CommProblem problem;
  /// The job ops, indexed like problem.jobs.
  llvm::SmallVector<sched::JobOpInterface> jobs;
  /// Per job: a weight half on another worker than its backward, whose
  /// problem inputs are that backward's (received, then re-read).
  llvm::SmallVector<bool> readsRemoteBackward;
};

/// The time of the rank programs `plan` makes of `input` (ProgramReplay.h),
/// in ticks, charged from the step's cost: messages by the link (or
/// `transfer`), reductions by `reduce`, optimizer steps, and an overlapped
/// pair's jobs each its own duration (forward, backward, weight half, in
/// turn, as the runtimes run them). The one replay behind
/// --sched-lower-ranks and --sched-stats; a located error if it fails.
llvm::FailureOr<int64_t> replayRankPrograms(sched::StepOp step,
                                            const StepCommProblem &input,
                                            const scheduling::CommPlan &plan);

/// Converts `step` (placed and simulated: every job has a worker, an order
/// and times); emits a located error naming the pass to run otherwise.
llvm::FailureOr<StepCommProblem> buildCommProblem(sched::StepOp step,
                                                  int64_t prefetchDepth);

/// A step planned: its problem, the plan (checked, and verified when
/// asked: every input local, and the programs deadlock-free) and the
/// programs' replayed time.
struct PlannedStep {
  StepCommProblem input;
  scheduling::CommPlan plan;
  int64_t makespan = 0; ///< the simulated step time: the last job's end
  int64_t replayed = 0;
};
/// The lowering's one planning step, shared by --sched-lower-ranks (which
/// builds rank IR from it) and the direct emission of program files
/// (emitPlannedStep, which writes them without building IR); a located
/// error if the step cannot be planned. `timing`, when given, times its
/// parts as nested scopes.
llvm::FailureOr<PlannedStep> planStep(sched::StepOp step,
                                      int64_t prefetchDepth, bool verifyPlan,
                                      mlir::TimingScope *timing = nullptr);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_COMMPROBLEM_H
