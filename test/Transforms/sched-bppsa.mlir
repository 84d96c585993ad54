// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-bppsa=width=4 | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-bppsa=width=4 --sched-bppsa=width=4 | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-bppsa="width=4 macs-per-unit=1000000" --sched-simulate | FileCheck %s --check-prefix=SIM
// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-bppsa="width=4 macs-per-unit=1000000" --sched-simulate --sched-stats -o /dev/null | FileCheck %s --check-prefix=STATS

// Tests the scan of S = 4 stages, microbatch by microbatch (docs/bppsa.md):
// G and the Jacobians J3, J2, J1 where the stage's backward was placed
// (their weights stay with their owner), the up-sweep ([0,1] = J3 G and
// [2,3] = J1 J2, then the total [0,3] = g_0), the down-sweep's one product
// ([0,2] = J2 [0,1]; its other combines are moves of the identity), then
// each stage's weight gradient from the prefix that ends at its output.
// Durations per row in units of one dense JV of a stage (H = 4): a JJ
// costs H.
// CHECK-LABEL: module @scan4
// CHECK-NEXT:    sched.step stages = 4, microbatches = 2, workers = 4 strategy #sched.gpipe attributes {sched.bppsa = {critical_path = 7 : i64, product_depth = 2 : i64, sequential_path = 5 : i64, sequential_work = 8 : i64, steps = 4 : i64, width = 4 : i64, work = 15 : i64}} {
// CHECK-NEXT:      %[[F0:.*]] = sched.forward(0, 0) on 0 weights 0{{$}}
// CHECK-NEXT:      %[[F1:.*]] = sched.forward(1, 0) from %[[F0]] on 1 weights 1{{$}}
// CHECK-NEXT:      %[[F2:.*]] = sched.forward(2, 0) from %[[F1]] on 2 weights 2{{$}}
// CHECK-NEXT:      %[[F3:.*]] = sched.forward(3, 0) from %[[F2]] on 3 weights 3{{$}}
// CHECK-NEXT:      %[[G:.*]] = sched.loss_grad(3, 0) from %[[F3]] on 3 duration 1{{$}}
// CHECK-NEXT:      %[[J3:.*]] = sched.jacobian(3, 0) act %[[F2]] on 3 weights 3 duration 1{{$}}
// CHECK-NEXT:      %[[J2:.*]] = sched.jacobian(2, 0) act %[[F1]] on 2 weights 2 duration 1{{$}}
// CHECK-NEXT:      %[[J1:.*]] = sched.jacobian(1, 0) act %[[F0]] on 1 weights 1 duration 1{{$}}
// CHECK-NEXT:      %[[U01:.*]] = sched.combine(3, 0) jv [0, 1] %[[G]], %[[J3]] on 3 duration 1{{$}}
// CHECK-NEXT:      %[[U23:.*]] = sched.combine(1, 0) jj [2, 3] %[[J2]], %[[J1]] on 1 duration 4{{$}}
// CHECK-NEXT:      %[[U03:.*]] = sched.combine(1, 0) jv [0, 3] %[[U01]], %[[U23]] on 1 duration 1{{$}}
// CHECK-NEXT:      %[[D02:.*]] = sched.combine(2, 0) jv [0, 2] %[[U01]], %[[J2]] on 2 duration 1{{$}}
// CHECK-NEXT:      sched.backward_weight(3, 0) grad %[[G]] act %[[F2]] on 3 weights 3 duration 1{{$}}
// CHECK-NEXT:      sched.backward_weight(2, 0) grad %[[U01]] act %[[F1]] on 2 weights 2 duration 1{{$}}
// CHECK-NEXT:      sched.backward_weight(1, 0) grad %[[D02]] act %[[F0]] on 1 weights 1 duration 1{{$}}
// CHECK-NEXT:      sched.backward_weight(0, 0) grad %[[U03]] on 0 weights 0 duration 1{{$}}
// CHECK-NEXT:      sched.forward(0, 1) on 0 weights 0{{$}}
// CHECK:           sched.combine(2, 1) jv [0, 2]
// CHECK:           sched.backward_weight(0, 1) grad
// CHECK-NEXT:    }
// SIM-LABEL: module @scan4
// STATS-LABEL: sched.step stages = 4, microbatches = 2, workers = 4
// STATS:       scan: 4 steps (2 ceil(log2 S)), product depth 2; per microbatch: critical path 4 vs 5 for back-propagation, work 12 vs 8
// STATS-NEXT:  scan simulated: longest backward 10 ticks (first scan job to last weight gradient); 10 scan tensors received
module @scan4 {
  sched.step stages = 4, microbatches = 2, workers = 4 strategy #sched.gpipe {
  }
}

// -----

// Tests S = 8 with every job one unit long: the backward takes the scan's
// levels, not S - 1 steps. G ends at 9; the products run at 10 ([0,1]),
// 11 ([0,3]), 12 ([0,4], [0,5], [0,7] = g_0 and the up-sweep's [0,2]) and
// 13 ([0,6]): a product depth of 4 = log2 8 up + (log2 8 - 1) down, the
// first down-sweep step being all moves; back-propagation takes 7 input
// steps after G. The Jacobians run as soon as their stage's forward has
// (GPipe's fill_drain ranks scan jobs with backwards, after forwards).
// SIM-LABEL: module @scan8
// SIM:         sched.loss_grad(7, 0) from %{{.*}} on 7 order 1 duration 1 at 8 to 9{{$}}
// SIM-NEXT:    sched.jacobian(7, 0) act %{{.*}} on 7 weights 7 order 2 duration 1 at 9 to 10{{$}}
// SIM-NEXT:    sched.jacobian(6, 0) act %{{.*}} on 6 weights 6 order 1 duration 1 at 7 to 8{{$}}
// SIM-NEXT:    sched.jacobian(5, 0) act %{{.*}} on 5 weights 5 order 1 duration 1 at 6 to 7{{$}}
// SIM-NEXT:    sched.jacobian(4, 0) act %{{.*}} on 4 weights 4 order 1 duration 1 at 5 to 6{{$}}
// SIM-NEXT:    sched.jacobian(3, 0) act %{{.*}} on 3 weights 3 order 1 duration 1 at 4 to 5{{$}}
// SIM-NEXT:    sched.jacobian(2, 0) act %{{.*}} on 2 weights 2 order 1 duration 1 at 3 to 4{{$}}
// SIM-NEXT:    sched.jacobian(1, 0) act %{{.*}} on 1 weights 1 order 1 duration 1 at 2 to 3{{$}}
// SIM-NEXT:    sched.combine(7, 0) jv [0, 1] %{{.*}}, %{{.*}} on 7 order 3 duration 1 at 10 to 11{{$}}
// SIM-NEXT:    sched.combine(5, 0) jj [2, 3] %{{.*}}, %{{.*}} on 5 order 2 duration 1 at 8 to 9{{$}}
// SIM-NEXT:    sched.combine(3, 0) jj [4, 5] %{{.*}}, %{{.*}} on 3 order 2 duration 1 at 6 to 7{{$}}
// SIM-NEXT:    sched.combine(1, 0) jj [6, 7] %{{.*}}, %{{.*}} on 1 order 2 duration 1 at 4 to 5{{$}}
// SIM-NEXT:    sched.combine(5, 0) jv [0, 3] %{{.*}}, %{{.*}} on 5 order 3 duration 1 at 11 to 12{{$}}
// SIM-NEXT:    sched.combine(1, 0) jj [4, 7] %{{.*}}, %{{.*}} on 1 order 3 duration 1 at 7 to 8{{$}}
// SIM-NEXT:    sched.combine(1, 0) jv [0, 7] %{{.*}}, %{{.*}} on 1 order 4 duration 1 at 12 to 13{{$}}
// SIM-NEXT:    sched.combine(3, 0) jv [0, 5] %{{.*}}, %{{.*}} on 3 order 3 duration 1 at 12 to 13{{$}}
// SIM-NEXT:    sched.combine(6, 0) jv [0, 2] %{{.*}}, %{{.*}} on 6 order 2 duration 1 at 11 to 12{{$}}
// SIM-NEXT:    sched.combine(4, 0) jv [0, 4] %{{.*}}, %{{.*}} on 4 order 2 duration 1 at 12 to 13{{$}}
// SIM-NEXT:    sched.combine(2, 0) jv [0, 6] %{{.*}}, %{{.*}} on 2 order 2 duration 1 at 13 to 14{{$}}
// SIM-NEXT:    sched.backward_weight(7, 0) grad %{{.*}} act %{{.*}} on 7 weights 7 order 4 duration 1 at 11 to 12{{$}}
// SIM:         sched.backward_weight(0, 0) grad %{{.*}} on 0 weights 0 order 1 duration 1 at 13 to 14{{$}}
// STATS-LABEL: sched.step stages = 8, microbatches = 1, workers = 8
// STATS:       scan: 6 steps (2 ceil(log2 S)), product depth 4; per microbatch: critical path 6 vs 9 for back-propagation, work 27 vs 16
// STATS-NEXT:  scan simulated: longest backward 13 ticks (first scan job to last weight gradient); 14 scan tensors received
module @scan8 {
  sched.step stages = 8, microbatches = 1, workers = 8 strategy #sched.gpipe cost <fwd = 1, bwd = 1> {
  }
}

// -----

// Tests that a split backward's weight halves are replaced too, and that a
// step already scanned is left alone (the pass is idempotent).
// CHECK-LABEL: module @split
// CHECK-NOT:     sched.backward(
// CHECK-NOT:     after
// CHECK:         sched.backward_weight(0, 0) grad %{{.*}} on 0 weights 0 duration 1{{$}}
// CHECK-NEXT:  }
module @split {
  sched.step stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe cost <fwd = 1, bwd = 1, bwd_w = 1> {
  }
}
