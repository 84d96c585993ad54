//===- Passes.td - pipesched passes -------------------------*- tablegen -*-===//

#ifndef PIPESCHED_TRANSFORMS_PASSES_TD
#define PIPESCHED_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SchedExpand : Pass<"sched-expand", "::pipesched::sched::StepOp"> {
  let summary = "Materialize the job graph of a step spec";
  let description = [{
    Turns a `sched.step` whose body is empty into the full graph of `2*S*B`
    jobs with their SSA edges: `(s, b, F)` consumes the output of
    `(s-1, b, F)`; `(s, b, B)` consumes the gradient of `(s+1, b, B)` (the
    output of `(S-1, b, F)` at the last stage) and the activation of
    `(s-1, b, F)`. Jobs are listed microbatch by microbatch, each forward
    chain followed by its backward chain. A step that already holds jobs is
    left alone. With a split backward (cost `bwd_w`) each backward is
    followed by its `sched.backward_weight`. Linear in the number of jobs.
  }];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

def SchedPlace : Pass<"sched-place", "::pipesched::sched::StepOp"> {
  let summary = "Evaluate the placement maps on every job";
  let description = [{
    Resolves the step's scheme (a named strategy and/or explicit `compute` /
    `weights` maps over `(s, b, d)`) and sets `on` (`w_compute`) and
    `weights` (`w_weights`) on every job that does not already carry them:
    a placement written by hand wins. A worker outside `[0, W)` is an error
    that names the job. Linear in the number of jobs; maps are evaluated
    directly, without creating attributes per job.
  }];
  let dependentDialects = ["::pipesched::sched::SchedDialect"];
}

#endif // PIPESCHED_TRANSFORMS_PASSES_TD
