// RUN: pipeline-opt %s -split-input-file -sched-verify-phase=phase=scheduled -verify-diagnostics
// RUN: not pipeline-opt %s -split-input-file -sched-verify-phase=phase=lowered 2>&1 | FileCheck %s --check-prefix=LOWERED
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-lower | pipeline-opt -sched-verify-phase=phase=lowered | FileCheck %s --check-prefix=PROGRAM

// Tests that the scheduling phase ends with every job placed and simulated.
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1
  // expected-error @below {{'sched.backward' op backward (s=0, b=0) is not placed and simulated after the scheduling phase}}
  %1 = sched.backward(0, 0) grad %0 on 0 weights 0
}

// -----

// Tests that a spec is not a scheduled step.
// expected-error @below {{'sched.step' op is still a spec after the scheduling phase: run --sched-expand}}
sched.step stages = 1, microbatches = 1, workers = 1 strategy #sched.ddp {
}

// LOWERED-COUNT-2: error: 'sched.step' op is left after the lowering phase: every step must become a sched.program
// PROGRAM: sched.program

// The phase pipelines compose to --pipeline-lower.
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-lower > %t.one
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-schedule | pipeline-opt --pipeline-ranks > %t.two
// RUN: diff %t.one %t.two
// RUN: pipeline-opt %S/Inputs/placed.mlir --pipeline-schedule | FileCheck %s --check-prefix=SCHEDULED
// SCHEDULED: sched.step
// SCHEDULED: sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1
// RUN: not pipeline-opt %S/Inputs/placed.mlir --pipeline-ranks 2>&1 | FileCheck %s --check-prefix=UNSCHEDULED
// UNSCHEDULED: error: 'sched.forward' op forward (s=0, b=0) is not simulated: run --sched-place and --sched-simulate first
