//===- EmitPlan.cpp - program files straight from a plan ------------------===//
//
// The lowering without rank IR: a simulated step is planned (planStep, as
// --sched-lower-ranks plans it) and the plan is written (PlanWriter.h).
// --sched-lower-ranks would build one op per job, message end, group and
// collective (4.2 million program ops at 10^6 jobs of 1F1B) that
// pipeline-translate would read back into the same plan (docs/bench.md).
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "PlanWriter.h"

#include "pipesched/Transforms/CommProblem.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

LogicalResult pipesched::emitPlannedStep(StepOp step,
                                         const PlannedStep &planned,
                                         ProgramEncoder &out) {
  TensorNaming naming(step);
  ProgramHeader header = makeProgramHeader(
      step.getStages(), step.getMicrobatches(), step.getWorkers(),
      step.getStageGraphAttr(), step.getTiedAttr(), step.getCostOrDefault(),
      step.getLayers(), planned.makespan, planned.replayed,
      /*scanTensors=*/0);
  return writePlan({std::move(header), naming, planned.input.problem,
                    planned.input.jobs, planned.plan},
                   out, step);
}

LogicalResult pipesched::compileProgram(Operation *op, int64_t prefetchDepth,
                                        bool verify, ProgramEncoder &out,
                                        TimingScope *timing) {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (steps.empty())
    return exportProgram(op, out);
  if (steps.size() + programs.size() != 1)
    return op->emitError() << "expected exactly one step to compile, got "
                           << steps.size() << " steps and " << programs.size()
                           << " programs";
  TimingScope none;
  TimingScope &root = timing ? *timing : none;
  FailureOr<PlannedStep> planned =
      planStep(steps.front(), prefetchDepth, verify, &root);
  if (failed(planned))
    return failure();
  TimingScope emitting = root.nest("Emit program");
  return emitPlannedStep(steps.front(), *planned, out);
}
