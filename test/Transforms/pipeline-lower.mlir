// RUN: pipeline-opt %s --split-input-file --pipeline-lower | FileCheck %s

// -----

// Tests 1F1B on 2 ranks with 3 microbatches: one forward warm-up on rank 0, then
// Megatron's send_forward_recv_backward as a group of a send and a receive;
// every receive is posted where the tensor is made, not where it is used;
// stage weights stay local (one optimizer step per rank, no reduction).
// CHECK-LABEL: sched.program @one_f_one_b
// CHECK-SAME:  stages = 2, microbatches = 3, workers = 2 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 12 replayed 12 {
// CHECK-NEXT:  sched.rank 0 owns [0] {
// CHECK-NEXT:  %[[R0V0:[0-9]+]] = sched.forward(0, 0) weights 0 at 0 to 1
// CHECK-NEXT:  sched.send %[[R0V0]] act(0, 0) to 1 tag 0 bytes 64
// CHECK-NEXT:  %[[R0V1:[0-9]+]] = sched.forward(0, 1) weights 0 at 1 to 2
// CHECK-NEXT:  %[[R0V2:[0-9]+]] = sched.group -> !sched.tensor {
// CHECK-NEXT:  sched.send %[[R0V1]] act(0, 1) to 1 tag 1 bytes 64
// CHECK-NEXT:  %[[R0V9:[0-9]+]] = sched.recv grad(1, 0) from 1 tag 2 bytes 64
// CHECK-NEXT:  sched.yield %[[R0V9]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R0V3:[0-9]+]] = sched.backward(0, 0) grad %[[R0V2]] weights 0 at 4 to 6
// CHECK-NEXT:  %[[R0V4:[0-9]+]] = sched.forward(0, 2) weights 0 at 6 to 7
// CHECK-NEXT:  %[[R0V5:[0-9]+]] = sched.group -> !sched.tensor {
// CHECK-NEXT:  %[[R0V9:[0-9]+]] = sched.recv grad(1, 1) from 1 tag 3 bytes 64
// CHECK-NEXT:  sched.send %[[R0V4]] act(0, 2) to 1 tag 4 bytes 64
// CHECK-NEXT:  sched.yield %[[R0V9]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R0V6:[0-9]+]] = sched.backward(0, 1) grad %[[R0V5]] weights 0 at 7 to 9
// CHECK-NEXT:  %[[R0V7:[0-9]+]] = sched.recv grad(1, 2) from 1 tag 5 bytes 64
// CHECK-NEXT:  %[[R0V8:[0-9]+]] = sched.backward(0, 2) grad %[[R0V7]] weights 0 at 10 to 12
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [1] {
// CHECK-NEXT:  %[[R1V0:[0-9]+]] = sched.recv act(0, 0) from 0 tag 0 bytes 64
// CHECK-NEXT:  %[[R1V1:[0-9]+]] = sched.forward(1, 0) from %[[R1V0]] weights 1 at 1 to 2
// CHECK-NEXT:  %[[R1V2:[0-9]+]] = sched.recv act(0, 1) from 0 tag 1 bytes 64
// CHECK-NEXT:  %[[R1V3:[0-9]+]] = sched.backward(1, 0) grad %[[R1V1]] act %[[R1V0]] weights 1 at 2 to 4
// CHECK-NEXT:  sched.send %[[R1V3]] grad(1, 0) to 0 tag 2 bytes 64
// CHECK-NEXT:  %[[R1V4:[0-9]+]] = sched.forward(1, 1) from %[[R1V2]] weights 1 at 4 to 5
// CHECK-NEXT:  %[[R1V5:[0-9]+]] = sched.backward(1, 1) grad %[[R1V4]] act %[[R1V2]] weights 1 at 5 to 7
// CHECK-NEXT:  %[[R1V6:[0-9]+]] = sched.group -> !sched.tensor {
// CHECK-NEXT:  sched.send %[[R1V5]] grad(1, 1) to 0 tag 3 bytes 64
// CHECK-NEXT:  %[[R1V9:[0-9]+]] = sched.recv act(0, 2) from 0 tag 4 bytes 64
// CHECK-NEXT:  sched.yield %[[R1V9]]
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R1V7:[0-9]+]] = sched.forward(1, 2) from %[[R1V6]] weights 1 at 7 to 8
// CHECK-NEXT:  %[[R1V8:[0-9]+]] = sched.backward(1, 2) grad %[[R1V7]] act %[[R1V6]] weights 1 at 8 to 10
// CHECK-NEXT:  sched.send %[[R1V8]] grad(1, 2) to 0 tag 5 bytes 64
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  }
// CHECK-NEXT:  }
sched.step @one_f_one_b stages = 2, microbatches = 3, workers = 2 strategy #sched.1f1b cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests DDP on 2 ranks: no transfer; each stage's gradient is all-reduced
// over both replicas right after its last backward, then stepped on each.
// CHECK-LABEL: sched.program @ddp
// CHECK-SAME:  stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 6 replayed 6 {
// CHECK-NEXT:  sched.rank 0 owns [0, 1] {
// CHECK-NEXT:  %[[R0V0:[0-9]+]] = sched.forward(0, 0) weights 0 at 0 to 1
// CHECK-NEXT:  %[[R0V1:[0-9]+]] = sched.forward(1, 0) from %[[R0V0]] weights 0 at 1 to 2
// CHECK-NEXT:  %[[R0V2:[0-9]+]] = sched.backward(1, 0) grad %[[R0V1]] act %[[R0V0]] weights 0 at 2 to 4
// CHECK-NEXT:  sched.allreduce_grad(1) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  %[[R0V3:[0-9]+]] = sched.backward(0, 0) grad %[[R0V2]] weights 0 at 4 to 6
// CHECK-NEXT:  sched.allreduce_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [0, 1] {
// CHECK-NEXT:  %[[R1V0:[0-9]+]] = sched.forward(0, 1) weights 1 at 0 to 1
// CHECK-NEXT:  %[[R1V1:[0-9]+]] = sched.forward(1, 1) from %[[R1V0]] weights 1 at 1 to 2
// CHECK-NEXT:  %[[R1V2:[0-9]+]] = sched.backward(1, 1) grad %[[R1V1]] act %[[R1V0]] weights 1 at 2 to 4
// CHECK-NEXT:  sched.allreduce_grad(1) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  %[[R1V3:[0-9]+]] = sched.backward(0, 1) grad %[[R1V2]] weights 1 at 4 to 6
// CHECK-NEXT:  sched.allreduce_grad(0) over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK-NEXT:  }
sched.step @ddp stages = 2, microbatches = 2, workers = 2 strategy #sched.ddp cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests FSDP on 2 ranks: weights of the other rank's stage are fetched one job
// ahead (prefetch depth 1) from their owner, which sends them, and released
// after the last job of the window; gradients are reduced to the owner,
// which alone steps.
// CHECK-LABEL: sched.program @fsdp
// CHECK-SAME:  stages = 2, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 6 replayed 6 {
// CHECK-NEXT:  sched.rank 0 owns [0] {
// CHECK-NEXT:  sched.group {
// CHECK-NEXT:  sched.fetch_weights(1) from 1 tag 0 bytes 256
// CHECK-NEXT:  sched.send_weights(0) to 1 tag 1 bytes 256
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R0V0:[0-9]+]] = sched.forward(0, 0) weights 0 at 0 to 1
// CHECK-NEXT:  %[[R0V1:[0-9]+]] = sched.forward(1, 0) from %[[R0V0]] weights 1 at 1 to 2
// CHECK-NEXT:  sched.send_weights(0) to 1 tag 2 bytes 256
// CHECK-NEXT:  %[[R0V2:[0-9]+]] = sched.backward(1, 0) grad %[[R0V1]] act %[[R0V0]] weights 1 at 2 to 4
// CHECK-NEXT:  sched.release_weights(1)
// CHECK-NEXT:  sched.reduce_grad(1) to 1 over [0, 1] bytes 256
// CHECK-NEXT:  %[[R0V3:[0-9]+]] = sched.backward(0, 0) grad %[[R0V2]] weights 0 at 4 to 6
// CHECK-NEXT:  sched.reduce_grad(0) to 0 over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(0)
// CHECK-NEXT:  }
// CHECK-NEXT:  sched.rank 1 owns [1] {
// CHECK-NEXT:  sched.group {
// CHECK-NEXT:  sched.send_weights(1) to 0 tag 0 bytes 256
// CHECK-NEXT:  sched.fetch_weights(0) from 0 tag 1 bytes 256
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[R1V0:[0-9]+]] = sched.forward(0, 1) weights 0 at 0 to 1
// CHECK-NEXT:  sched.release_weights(0)
// CHECK-NEXT:  %[[R1V1:[0-9]+]] = sched.forward(1, 1) from %[[R1V0]] weights 1 at 1 to 2
// CHECK-NEXT:  sched.fetch_weights(0) from 0 tag 2 bytes 256
// CHECK-NEXT:  %[[R1V2:[0-9]+]] = sched.backward(1, 1) grad %[[R1V1]] act %[[R1V0]] weights 1 at 2 to 4
// CHECK-NEXT:  sched.reduce_grad(1) to 1 over [0, 1] bytes 256
// CHECK-NEXT:  sched.optimizer_step(1)
// CHECK-NEXT:  %[[R1V3:[0-9]+]] = sched.backward(0, 1) grad %[[R1V2]] weights 0 at 4 to 6
// CHECK-NEXT:  sched.release_weights(0)
// CHECK-NEXT:  sched.reduce_grad(0) to 0 over [0, 1] bytes 256
// CHECK-NEXT:  }
// CHECK-NEXT:  }
sched.step @fsdp stages = 2, microbatches = 2, workers = 2 strategy #sched.fsdp cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests GPipe 4x4: a middle rank receives each activation from the previous
// rank and sends it on; gradients flow back; no weights move.
// CHECK-LABEL: sched.program @gpipe
// CHECK-SAME:  stages = 4, microbatches = 4, workers = 4 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 21 replayed 21 {
// CHECK:         sched.rank 1 owns [1] {
// CHECK-NEXT:      %[[X0:.*]] = sched.recv act(0, 0) from 0 tag 0 bytes 64
// CHECK-NEXT:      %[[Y0:.*]] = sched.forward(1, 0) from %[[X0]] weights 1 at 1 to 2
// CHECK-NEXT:      %[[X1:.*]] = sched.group -> !sched.tensor {
// CHECK-NEXT:        sched.send %[[Y0]] act(1, 0) to 2 tag 1 bytes 64
// CHECK-NEXT:        %[[R:.*]] = sched.recv act(0, 1) from 0 tag 2 bytes 64
// CHECK-NEXT:        sched.yield %[[R]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1) from %[[X1]] weights 1 at 2 to 3
// CHECK:           sched.optimizer_step(1)
// CHECK-NEXT:    }
// CHECK-NOT:     sched.fetch_weights
// CHECK-NOT:     sched.allreduce_grad
sched.step @gpipe stages = 4, microbatches = 4, workers = 4 strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests LPP with G = 2 rings of R = 2: each ring is a pipeline of its
// microbatches; a stage's replicas (one per ring) all-reduce its gradient.
// CHECK-LABEL: sched.program @lpp
// CHECK-SAME:  stages = 2, microbatches = 4, workers = 4 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 9 replayed 9 {
// CHECK:         sched.rank 0 owns [0] {
// CHECK:           sched.send %{{.*}} act(0, 0) to 1 tag
// CHECK:           sched.allreduce_grad(0) over [0, 2] bytes 256
// CHECK-NEXT:      sched.optimizer_step(0)
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 1 owns [1] {
// CHECK:           sched.allreduce_grad(1) over [1, 3] bytes 256
// CHECK-NEXT:      sched.optimizer_step(1)
// CHECK:         sched.rank 2 owns [0] {
// CHECK:           sched.send %{{.*}} act(0, 1) to 3 tag
// CHECK:           sched.allreduce_grad(0) over [0, 2] bytes 256
sched.step @lpp stages = 2, microbatches = 4, workers = 4 strategy #sched.lpp<groups = 2, ring = 2> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests FSLPP with G = 2: LPP's compute, weights on h(s, s) (stage 0 on
// rank 0, stage 1 on rank 3): ranks 1 and 2 fetch, release, and reduce to
// the owner, which alone steps.
// CHECK-LABEL: sched.program @fslpp
// CHECK-SAME:  stages = 2, microbatches = 4, workers = 4 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 9 replayed 9 {
// CHECK:         sched.rank 0 owns [0] {
// CHECK:           sched.send_weights(0) to 2 tag
// CHECK:           sched.reduce_grad(0) to 0 over [0, 2] bytes 256
// CHECK-NEXT:      sched.optimizer_step(0)
// CHECK:         sched.rank 1 owns [] {
// CHECK:           sched.fetch_weights(1) from 3 tag
// CHECK:           sched.release_weights(1)
// CHECK:           sched.reduce_grad(1) to 3 over [1, 3] bytes 256
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 2 owns [] {
// CHECK:           sched.fetch_weights(0) from 0 tag
// CHECK:           sched.release_weights(0)
// CHECK:           sched.reduce_grad(0) to 0 over [0, 2] bytes 256
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 3 owns [1] {
// CHECK:           sched.send_weights(1) to 1 tag
// CHECK:           sched.reduce_grad(1) to 3 over [1, 3] bytes 256
// CHECK-NEXT:      sched.optimizer_step(1)
sched.step @fslpp stages = 2, microbatches = 4, workers = 4 strategy #sched.fslpp<groups = 2, ring = 2> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}

// -----

// Tests interleaved 1F1B with v = 2 chunks on 2 ranks: rank 0 holds stages
// 0 and 2 and runs Megatron's order; activations go 0 -> 1 -> 0 -> 1 and
// back, v times the point-to-point traffic of 1F1B.
// CHECK-LABEL: sched.program @interleaved
// CHECK-SAME:  stages = 4, microbatches = 2, workers = 2 cost <fwd = 1, bwd = 2, act = 64, weights = 256> makespan 15 replayed 15 {
// CHECK:         sched.rank 0 owns [0, 2] {
// CHECK-NEXT:      %[[A:.*]] = sched.forward(0, 0) weights 0
// CHECK-NEXT:      sched.send %[[A]] act(0, 0) to 1 tag 0 bytes 64
// CHECK-NEXT:      %[[B:.*]] = sched.forward(0, 1) weights 0
// CHECK:           sched.forward(2, 0) from %{{.*}} weights 0
// CHECK:           sched.optimizer_step
// CHECK:         sched.rank 1 owns [1, 3] {
sched.step @interleaved stages = 4, microbatches = 2, workers = 2 strategy #sched.interleaved_1f1b<chunks = 2> cost <fwd = 1, bwd = 2, act = 64, weights = 256> {
}
