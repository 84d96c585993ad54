// RUN: pipeline-opt %s --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=ROUND

// A valid scanned step (docs/bppsa.md), printed back; then one defect per
// case below.
// ROUND: sched.combine(1, 0) jv [0, 1] %{{.*}}, %{{.*}} duration 4{{$}}
sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1 duration 1
  %3 = sched.jacobian (1, 0) act %0 duration 4
  %4 = sched.combine (1, 0) jv [0, 1] %2, %3 duration 4
  sched.backward_weight (1, 0) grad %2 act %0 duration 4
  sched.backward_weight (0, 0) grad %4 duration 4
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  %3 = sched.jacobian (1, 0) act %0
  // expected-error @below {{covering [0, 1] is a jv product (jv exactly when it starts at G)}}
  %4 = sched.combine (1, 0) jj [0, 1] %2, %3
  sched.backward_weight (1, 0) grad %2 act %0
  sched.backward_weight (0, 0) grad %4
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  %3 = sched.jacobian (1, 0) act %0
  // The operator does not commute: the earlier interval goes first.
  // expected-error @below {{covering [0, 1] must join the scan outputs of microbatch 0 covering [0, m] and [m + 1, 1], in that order}}
  %4 = sched.combine (1, 0) jv [0, 1] %3, %2
  sched.backward_weight (1, 0) grad %2 act %0
  sched.backward_weight (0, 0) grad %4
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  %3 = sched.jacobian (1, 0) act %0
  %4 = sched.combine (1, 0) jv [0, 1] %2, %3
  sched.backward_weight (1, 0) grad %2 act %0
  // expected-error @below {{backward_weight (s=0, b=0) expects the gradient of its output, the scan's prefix [0, 1] of microbatch 0, got the output of scan (s=1, b=0)}}
  sched.backward_weight (0, 0) grad %2
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  // expected-error @below {{the loss gradient is taken at the last stage, 1}}
  %2 = sched.loss_grad (0, 0) from %0
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward (0, 0)
  // expected-error @below {{stage 0's Jacobian is never scanned}}
  %1 = sched.jacobian (0, 0) act %0
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  // expected-error @below {{backward (s=1, b=0) cannot appear beside the jobs of a scanned backward}}
  %3 = sched.backward (1, 0) grad %1 act %0
}

// -----

// expected-error @below {{is missing backward_weight (s=0, b=0)}}
sched.step stages = 2, microbatches = 1, workers = 2 {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  sched.backward_weight (1, 0) grad %2 act %0
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.backward (1, 0) grad %1 act %0
  // expected-error @below {{reads either its backward ('after') or a scanned gradient ('grad', 'act'), not both}}
  sched.backward_weight (1, 0) after %2 grad %1
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward (0, 0)
  // expected-error @below {{'sched.backward_weight' op backward_weight (s=0, b=0) reads activations only with a 'grad'}}
  sched.backward_weight (0, 0) act %0
}

// -----

sched.step stages = 2, microbatches = 1, workers = 2 partial {
  %0 = sched.forward (0, 0)
  %1 = sched.forward (1, 0) from %0
  %2 = sched.loss_grad (1, 0) from %1
  // expected-error @below {{'sched.combine' op interval [1, 1] is not a product of at least two elements of the scan [0, 1]}}
  %3 = sched.combine (1, 0) jv [1, 1] %2, %2
}
