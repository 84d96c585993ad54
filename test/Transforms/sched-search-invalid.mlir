// RUN: pipeline-opt -split-input-file -verify-diagnostics --sched-search=memory-limit=1 %s

// Tests that a step that already holds jobs is refused.
// expected-error @+1 {{--sched-search needs a step spec (no jobs): run it before --sched-expand}}
sched.step stages = 1, microbatches = 1, workers = 1 strategy #sched.gpipe {
  %0 = sched.forward (0, 0)
  %1 = sched.backward (0, 0) grad %0
}

// -----

// Tests that a limit no schedule meets is refused, naming the closest one:
// two stages on one worker keep two activations.
// expected-error @+2 {{has no schedule within the memory limit of 1 activations per worker}}
// expected-note @+1 {{the least peak is 2 activations, by strategy #sched.ddp}}
sched.step stages = 2, microbatches = 2, workers = 1 cost <fwd = 1, bwd = 2> {
}
