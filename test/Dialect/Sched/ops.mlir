// RUN: pipeline-opt %s | pipeline-opt | FileCheck %s
// RUN: pipeline-opt %s --mlir-print-op-generic | pipeline-opt | FileCheck %s
// RUN: pipeline-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Tests a spec: a step with an empty body and the default cost.
// CHECK-LABEL: module @spec
// CHECK-NEXT:    sched.step stages = 4, microbatches = 8, workers = 4 {
// CHECK-NEXT:    }
module @spec {
  sched.step stages = 4, microbatches = 8, workers = 4 {
  }
}

// Tests the cost attribute: scalars, per-stage lists and sizes.
// CHECK-LABEL: module @cost
// CHECK-NEXT:    sched.step stages = 3, microbatches = 1, workers = 1 cost <fwd = [1, 1, 2], bwd = [2, 2, 4], act = 4096, weights = 65536> partial {
// GENERIC-LABEL: sym_name = "cost"
// GENERIC:         cost = #sched.cost<fwd = [1, 1, 2], bwd = [2, 2, 4], act = 4096, weights = 65536>
// GENERIC-SAME:    partial
module @cost {
  sched.step stages = 3, microbatches = 1, workers = 1 cost <weights = 65536, act = 4096, bwd = [2, 2, 4], fwd = [1, 1, 2]> partial {
  }
}

// Tests the part of the activation the weight half keeps (`act_w`), printed
// after `act`.
// CHECK-LABEL: module @parts
// CHECK-NEXT:    sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, act_w = 400> {
module @parts {
  sched.step stages = 1, microbatches = 1, workers = 1 cost <act_w = 400, act = 1000, bwd_w = 1, bwd = 1> {
  }
}

// Tests the layer count per stage of a partitioned step (--sched-partition).
// CHECK-LABEL: module @layers
// CHECK-NEXT:    sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched<1f1b> cost <fwd = [15, 15, 13, 14], bwd = [30, 30, 26, 28]> layers [5, 3, 3, 3] {
// GENERIC-LABEL: sym_name = "layers"
// GENERIC:         layers = array<i64: 5, 3, 3, 3>
module @layers {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b cost <fwd = [15, 15, 13, 14], bwd = [30, 30, 26, 28]> layers [5, 3, 3, 3] {
  }
}

// Tests a calibrated cost: a transfer time and a real time unit round-trip.
// CHECK-LABEL: module @calibrated
// CHECK-NEXT:    sched.step stages = 2, microbatches = 1, workers = 2 cost <fwd = [41200, 40800], bwd = [85300, 84900], act = 2048, transfer = 6100, unit = ns> {
// GENERIC-LABEL: sym_name = "calibrated"
// GENERIC:         cost = #sched.cost<fwd = [41200, 40800], bwd = [85300, 84900], act = 2048, transfer = 6100, unit = ns>
module @calibrated {
  sched.step stages = 2, microbatches = 1, workers = 2 cost <unit = ns, transfer = 6100, fwd = [41200, 40800], bwd = [85300, 84900], act = 2048> {
  }
}

// Tests the coarser units.
// CHECK-LABEL: module @units
// CHECK-NEXT:    sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5, unit = us> {
// CHECK:         sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5, unit = ms> {
module @units {
  sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5, unit = us> {
  }
  sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5, unit = ms> {
  }
}

// Tests a full graph of two stages and one microbatch, with placement.
// CHECK-LABEL: module @graph
// CHECK-NEXT:    sched.step stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> {
// CHECK-NEXT:      %[[F0:.*]] = sched.forward(0, 0) on 0 weights 0
// CHECK-NEXT:      %[[F1:.*]] = sched.forward(1, 0) from %[[F0]] on 1 weights 1
// CHECK-NEXT:      %[[B1:.*]] = sched.backward(1, 0) grad %[[F1]] act %[[F0]] on 1 weights 1
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0) grad %[[B1]] on 0 weights 0
// CHECK-NEXT:    }
// GENERIC-LABEL: sym_name = "graph"
// Integer fields are native properties; an absent optional one prints as [].
// GENERIC:         "sched.forward"() <{compute = [0], end = [], microbatch = 0 : i64, order = [], overlapped = false, stage = 0 : i64, start = [], weights = [0]}> : () -> !sched.tensor
// GENERIC:         "sched.backward"(%{{.*}}, %{{.*}}) <{compute = [1], end = [], microbatch = 0 : i64, operandSegmentSizes = array<i32: 1, 1>, order = [], stage = 1 : i64, start = [], weights = [1], whole = false}> : (!sched.tensor, !sched.tensor) -> !sched.tensor
module @graph {
  sched.step stages = 2, microbatches = 1, workers = 2 cost <fwd = 1, bwd = 2> {
    %0 = sched.forward(0, 0) on 0 weights 0
    %1 = sched.forward(1, 0) from %0 on 1 weights 1
    %2 = sched.backward(1, 0) grad %1 act %0 on 1 weights 1
    %3 = sched.backward(0, 0) grad %2 on 0 weights 0
  }
}

// Tests a partial graph: a job may miss the edges of jobs that are absent.
// CHECK-LABEL: module @partial
// CHECK-NEXT:    sched.step stages = 2, microbatches = 2, workers = 1 partial {
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1)
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0)
// CHECK-NEXT:    }
module @partial {
  sched.step stages = 2, microbatches = 2, workers = 1 partial {
    %0 = sched.forward(1, 1)
    %1 = sched.backward(0, 0)
  }
}

// Tests named steps: a symbol name, unique in the module, that tests anchor
// their labels on; an unnamed step beside it stays unnamed.
// CHECK-LABEL: sched.step @first stages = 2, microbatches = 2, workers = 2 strategy #sched.gpipe {
// CHECK:       sched.step stages = 1, microbatches = 1, workers = 1 {
// CHECK-LABEL: sched.step @second stages = 1, microbatches = 1, workers = 1 {
module @named {
  sched.step @first stages = 2, microbatches = 2, workers = 2 strategy #sched.gpipe {
  }
  sched.step stages = 1, microbatches = 1, workers = 1 {
  }
  sched.step @second stages = 1, microbatches = 1, workers = 1 {
  }
}
