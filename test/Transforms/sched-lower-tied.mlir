// RUN: pipeline-opt %s --split-input-file --pipeline-lower | FileCheck %s

// Tests 1F1B on 2 ranks with stages 0 and 1 tied: after its last backward
// each owner sums the tied weight's gradient with the other's, then steps.
// CHECK-LABEL: sched.program stages = 2, microbatches = 2, workers = 2 tied <[0, 1]> cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 9 replayed 9 {
// CHECK-NEXT:  sched.rank 0 owns [0] {
// CHECK:       sched.backward(0, 1) grad %{{[0-9]+}} weights 0 at 7 to 9
// CHECK-NEXT:  sched.tied_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [1] {
// CHECK:       sched.send %{{[0-9]+}} grad(1, 1) to 0 tag 3 bytes 64
// CHECK-NEXT:  sched.tied_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  }
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.1f1b tied <[0, 1]> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests ZBV, whose V puts stages 0 and 3 on rank 0: the tied sum is local
// (one member), after the last weight gradient of either stage, and stage
// 3 waits for it to step (without the tie it steps after its own last
// weight gradient, at 9).
// CHECK-LABEL: sched.program stages = 4, microbatches = 2, workers = 2 tied <[0, 3]>
// CHECK-NEXT:  sched.rank 0 owns [0, 3] {
// CHECK:       sched.backward_weight(3, 1) after %{{[0-9]+}} weights 0 at 8 to 9
// CHECK-NEXT:  %{{[0-9]+}} = sched.backward(0, 0)
// CHECK:       sched.backward_weight(0, 1) after %{{[0-9]+}} weights 0 at 13 to 14
// CHECK-NEXT:  sched.tied_grad(0) over [0] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  sched.optimizer_step(3)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [1, 2] {
// CHECK-NOT:   sched.tied_grad
// CHECK:       sched.optimizer_step(2)
// CHECK:       sched.optimizer_step(1)
// CHECK-NEXT:  }
sched.step stages = 4, microbatches = 2, workers = 2 strategy #sched.zbv tied <[0, 3]> cost <fwd = 1, bwd = 1, bwd_w = 1, act = 64, weights = 256> {
}

// -----

// Tests DDP: every rank owns both tied stages and, after their
// all-reduces, holds both whole gradients: each sums them alone.
// CHECK-LABEL: sched.program stages = 2, microbatches = 2, workers = 2 tied <[0, 1]>
// CHECK-NEXT:  sched.rank 0 owns [0, 1] {
// CHECK:       sched.allreduce_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.tied_grad(0) over [0] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [0, 1] {
// CHECK:       sched.allreduce_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.tied_grad(0) over [1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  }
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.ddp tied <[0, 1]> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests LPP (two groups of 4 ranks, each a replica of every stage): the
// owners of stage 0 (ranks 0 and 4) and of stage 3 (ranks 3 and 7) do not
// own both, so all four sum together, after the replicas' all-reduces.
// CHECK-LABEL: sched.program stages = 4, microbatches = 4, workers = 8 tied <[0, 3]>
// CHECK-NEXT:  sched.rank 0 owns [0] {
// CHECK:       sched.allreduce_grad(0) over [0, 4] bytes 256
// CHECK-NEXT:  sched.tied_grad(0) over [0, 3, 4, 7] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK:       sched.rank 3 owns [3] {
// CHECK:       sched.allreduce_grad(3) over [3, 7] bytes 256
// CHECK-NEXT:  sched.tied_grad(0) over [0, 3, 4, 7] bytes 256
// CHECK-NEXT:  sched.optimizer_step(3)
// CHECK-NEXT:  }
sched.step stages = 4, microbatches = 4, workers = 8 strategy #sched.lpp<groups = 2, ring = 4> tied <[0, 3]> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}
