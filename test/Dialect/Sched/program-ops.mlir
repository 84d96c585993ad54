// RUN: pipeline-opt %s | pipeline-opt | FileCheck %s
// RUN: pipeline-opt %s --mlir-print-op-generic | pipeline-opt | FileCheck %s

// Tests that the communication ops round-trip in rank programs (custom and
// generic form).

// CHECK-LABEL: module @ranks
// CHECK:         sched.rank 0 owns [0] {
// CHECK-NEXT:      %[[F:.*]] = sched.forward(0, 0) weights 0 at 0 to 1
// CHECK-NEXT:      sched.group {
// CHECK-NEXT:        sched.send %[[F]] act(0, 0) to 1 tag 0 bytes 64
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 1 owns [1] {
// CHECK-NEXT:      %[[G:.*]] = sched.group -> !sched.tensor {
// CHECK-NEXT:        %[[R:.*]] = sched.recv act(0, 0) from 0 tag 0 bytes 64
// CHECK-NEXT:        sched.yield %[[R]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0) from %[[G]] weights 1 at 1 to 2
module @ranks {
  sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
    sched.rank 0 owns [0] {
      %0 = sched.forward(0, 0) weights 0 at 0 to 1
      sched.group {
        sched.send %0 act(0, 0) to 1 tag 0 bytes 64
      }
    }
    sched.rank 1 owns [1] {
      %0 = sched.group -> !sched.tensor {
        %2 = sched.recv act(0, 0) from 0 tag 0 bytes 64
        sched.yield %2
      }
      %1 = sched.forward(1, 0) from %0 weights 1 at 1 to 2
    }
  }
}

// CHECK-LABEL: module @every_op
// CHECK:         sched.rank 0 owns [1] {
// CHECK-NEXT:      sched.fetch_weights(0) from 1 tag 1 bytes 256
// CHECK-NEXT:      %[[F:.*]] = sched.forward(0, 0) weights 1 at 0 to 1
// CHECK-NEXT:      sched.send %[[F]] act(0, 0) to 1 tag 2 bytes 64
// CHECK-NEXT:      sched.release_weights(0)
// CHECK-NEXT:      sched.reduce_grad(0) to 1 over [0, 1] bytes 256
// CHECK-NEXT:      sched.allreduce_grad(1) over [0, 1] bytes 256
// CHECK-NEXT:      sched.optimizer_step(1)
// CHECK-NEXT:    }
// CHECK-NEXT:    sched.rank 1 owns [0, 1] {
// CHECK-NEXT:      sched.send_weights(0) to 0 tag 1 bytes 256
// CHECK-NEXT:      %{{.*}} = sched.recv act(0, 0) from 0 tag 2 bytes 64
module @every_op {
  sched.program stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> makespan 0 partial {
    sched.rank 0 owns [1] {
      sched.fetch_weights(0) from 1 tag 1 bytes 256
      %0 = sched.forward(0, 0) weights 1 at 0 to 1
      sched.send %0 act(0, 0) to 1 tag 2 bytes 64
      sched.release_weights(0)
      sched.reduce_grad(0) to 1 over [0, 1] bytes 256
      sched.allreduce_grad(1) over [0, 1] bytes 256
      sched.optimizer_step(1)
    }
    sched.rank 1 owns [0, 1] {
      sched.send_weights(0) to 0 tag 1 bytes 256
      %0 = sched.recv act(0, 0) from 0 tag 2 bytes 64
      sched.reduce_grad(0) to 1 over [0, 1] bytes 256
      sched.allreduce_grad(1) over [0, 1] bytes 256
      sched.optimizer_step(0)
      sched.optimizer_step(1)
    }
  }
}
