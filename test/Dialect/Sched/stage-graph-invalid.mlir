// RUN: pipeline-opt %s -split-input-file -verify-diagnostics

// Tests that stage graph edges go forward.
// expected-error @below {{stage graph edge 2 -> 1 must go from a lower to a higher stage}}
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 2, 2 -> 1> {
}

// -----

// Tests that an edge appears once.
// expected-error @below {{stage graph edge 0 -> 1 appears twice}}
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 1, 0 -> 1> {
}

// -----

// Tests that edges name existing stages.
// expected-error @below {{'sched.step' op stage graph names stage 3, outside [0, 3)}}
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 3> {
}

// -----

// Tests that a stage fed by two stages takes both activations.
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 2, 1 -> 2> partial {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.forward' op forward (s=2, b=0) expects 2 activations from forward (s=0, b=0), forward (s=1, b=0), got 1}}
  %2 = sched.forward(2, 0) from %0
}

// -----

// Tests that the activations come in the order of the edges.
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 2, 1 -> 2> partial {
  %0 = sched.forward(0, 0)
  %1 = sched.forward(1, 0)
  // expected-error @below {{'sched.forward' op forward (s=2, b=0) expects its activation from forward (s=0, b=0), got the output of forward (s=1, b=0)}}
  %2 = sched.forward(2, 0) from %1, %0
}

// -----

// Tests that a stage feeding two stages takes both gradients.
sched.step stages = 3, microbatches = 1, workers = 1 graph <0 -> 1, 0 -> 2> partial {
  %0 = sched.forward(0, 0)
  %1 = sched.forward(1, 0) from %0
  %2 = sched.backward(1, 0) grad %1 act %0
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) expects 2 gradients from backward (s=1, b=0), backward (s=2, b=0), got 1}}
  %3 = sched.backward(0, 0) grad %2
}
