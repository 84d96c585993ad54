// RUN: pipeline-opt %s --split-input-file | pipeline-opt --split-input-file | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --mlir-print-op-generic | pipeline-opt --split-input-file | FileCheck %s

// Tests the round trip of a step that ties the first and the last stage
// (Megatron's embedding group).
// CHECK-LABEL: sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched<1f1b> tied <[0, 3]> cost <fwd = 1, bwd = 2> {
// CHECK-NEXT:  }
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b tied <[0, 3]> cost <fwd = 1, bwd = 2> {
}

// -----

// Tests several groups, a group of three stages and stages in any order.
// CHECK-LABEL: sched.step stages = 6, microbatches = 2, workers = 2 tied <[5, 0], [1, 2, 4]> {
// CHECK-NEXT:  }
sched.step stages = 6, microbatches = 2, workers = 2 tied <[5, 0], [1, 2, 4]> {
}

// -----

// Tests the attribute on its own.
// CHECK-LABEL: sched.step stages = 2, microbatches = 1, workers = 1 attributes {tie = #sched.tied<[0, 1]>} {
// CHECK-NEXT:  }
sched.step stages = 2, microbatches = 1, workers = 1 attributes {tie = #sched.tied<[0, 1]>} {
}

// -----

// Tests a rank program with a tied reduction between two owners and a local
// one.
// CHECK-LABEL: sched.program stages = 4, microbatches = 1, workers = 2 tied <[0, 3], [1, 2]> cost <fwd = 1, bwd = 2> makespan 0 partial {
// CHECK-NEXT:    sched.rank 0 owns [0, 1, 2] {
// CHECK-NEXT:      sched.tied_grad(0) over [0, 1] bytes 64
// CHECK-NEXT:      sched.tied_grad(1) over [0] bytes 64
// CHECK-NEXT:      sched.optimizer_step(0)
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 1 owns [3] {
// CHECK-NEXT:      sched.tied_grad(0) over [0, 1] bytes 64
// CHECK-NEXT:    }
sched.program stages = 4, microbatches = 1, workers = 2 tied <[0, 3], [1, 2]> cost <fwd = 1, bwd = 2> makespan 0 partial {
  sched.rank 0 owns [0, 1, 2] {
    sched.tied_grad(0) over [0, 1] bytes 64
    sched.tied_grad(1) over [0] bytes 64
    sched.optimizer_step(0)
  }
  sched.rank 1 owns [3] {
    sched.tied_grad(0) over [0, 1] bytes 64
  }
}
