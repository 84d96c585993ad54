// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place -verify-diagnostics

// Tests that a map sending a job outside [0, W) is an error naming the first
// such job (expanded jobs carry the location of their step).
// expected-error @below {{'sched.forward' op w_compute maps forward (s=1, b=2) to worker 4, outside [0, 4)}}
sched.step stages = 2, microbatches = 4, workers = 4
    compute affine_map<(s, b, d) -> (b + s * 2)> {
}

// -----

// Tests the weights map likewise.
// expected-error @below {{'sched.forward' op w_weights maps forward (s=0, b=0) to worker -1, outside [0, 2)}}
sched.step stages = 2, microbatches = 1, workers = 2
    compute affine_map<(s, b, d) -> (s)> weights affine_map<(s, b, d) -> (s - 1)> {
}

// -----

// Tests that a job written by hand is located at its own line.
sched.step stages = 1, microbatches = 1, workers = 2 compute affine_map<(s, b, d) -> (d * 2)> {
  %0 = sched.forward(0, 0)
  // expected-error @below {{'sched.backward' op w_compute maps backward (s=0, b=0) to worker 2, outside [0, 2)}}
  %1 = sched.backward(0, 0) grad %0
}

// -----

// Tests that a step without strategy or compute map cannot be placed.
// expected-error @below {{'sched.step' op has no placement: give a strategy or a compute map}}
sched.step stages = 2, microbatches = 1, workers = 2 {
}

// -----

// Tests that a static order is refused on a placement it was not made for
// (it reported a deadlock or an order error before).
// expected-error @below {{'sched.forward' op the static order 'interleaved' runs forward (s=1, b=0) on worker 1, but w_compute places it on worker 0: use the order's own placement (its strategy) or a priority key}}
sched.step stages = 4, microbatches = 4, workers = 3 compute affine_map<(s, b, d) -> (d mod 3)> priority <interleaved> {
}
