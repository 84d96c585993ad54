// RUN: pipeline-opt %s --sched-simulate=memory-cap-bytes=10 -verify-diagnostics

// Tests that a byte cap needs activation sizes.
// expected-error @below {{'sched.step' op a cap in bytes needs the cost's 'act' size}}
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0) on 0
  %1 = sched.backward(0, 0) grad %0 on 0
}
