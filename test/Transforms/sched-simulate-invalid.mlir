// RUN: pipeline-opt %s --split-input-file --sched-simulate -verify-diagnostics
// Negative option values are refused, not taken as "none given".
// RUN: echo 'sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.gpipe {}' | not pipeline-opt --sched-expand --sched-place "--sched-simulate=memory-cap=-5" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: echo 'sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.gpipe {}' | not pipeline-opt --sched-expand --sched-place "--sched-simulate=transfer-time=-2" 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: 'sched.step' op --sched-simulate needs transfer-time >= -1 (-1: the cost's), memory-cap >= 0 and memory-cap-bytes >= 0 (0: none given), got

// Tests that simulation needs a placed graph.
sched.step stages = 1, microbatches = 1, workers = 1 {
  // expected-error @below {{'sched.forward' op forward (s=0, b=0) has no compute worker: run --sched-place first}}
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
}

// -----

// Tests that an explicit order that waits in a cycle across workers is
// reported with the stuck jobs.
// expected-error @below {{'sched.step' op cannot be scheduled: deadlock: worker 0 waits for job 3, which needs job 2 (not run, on worker 1); worker 1 waits for job 5, which needs job 4 (not run, on worker 0)}}
sched.step stages = 2, microbatches = 2, workers = 2 {
  %0 = sched.forward(0, 0) on 0 order 0
  %1 = sched.forward(1, 0) from %0 on 1 order 2
  %2 = sched.backward(1, 0) grad %1 act %0 on 1 order 3
  // expected-note @below {{backward (s=0, b=0) is stuck}}
  %3 = sched.backward(0, 0) grad %2 on 0 order 1
  %4 = sched.forward(0, 1) on 0 order 2
  // expected-note @below {{forward (s=1, b=1) is stuck}}
  %5 = sched.forward(1, 1) from %4 on 1 order 0
  %6 = sched.backward(1, 1) grad %5 act %4 on 1 order 1
  %7 = sched.backward(0, 1) grad %6 on 0 order 3
}

