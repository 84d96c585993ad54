// RUN: pipeline-opt %s --sched-expand --split-input-file | FileCheck %s

// Tests the expansion of 2 stages x 2 microbatches: all 2*S*B jobs, listed
// microbatch by microbatch, with their activation and gradient edges.
// CHECK-LABEL: module @two_by_two
// CHECK-NEXT:    sched.step stages = 2, microbatches = 2, workers = 2 {
// CHECK-NEXT:      %[[F00:.*]] = sched.forward(0, 0){{$}}
// CHECK-NEXT:      %[[F10:.*]] = sched.forward(1, 0) from %[[F00]]{{$}}
// CHECK-NEXT:      %[[B10:.*]] = sched.backward(1, 0) grad %[[F10]] act %[[F00]]{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0) grad %[[B10]]{{$}}
// CHECK-NEXT:      %[[F01:.*]] = sched.forward(0, 1){{$}}
// CHECK-NEXT:      %[[F11:.*]] = sched.forward(1, 1) from %[[F01]]{{$}}
// CHECK-NEXT:      %[[B11:.*]] = sched.backward(1, 1) grad %[[F11]] act %[[F01]]{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1) grad %[[B11]]{{$}}
// CHECK-NEXT:    }
module @two_by_two {
  sched.step stages = 2, microbatches = 2, workers = 2 {
  }
}

// -----

// Tests a single stage: the backward starts from the forward's output.
// CHECK-LABEL: module @one_stage
// CHECK-NEXT:    sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5> {
// CHECK-NEXT:      %[[F:.*]] = sched.forward(0, 0){{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0) grad %[[F]]{{$}}
// CHECK-NEXT:    }
module @one_stage {
  sched.step stages = 1, microbatches = 1, workers = 1 cost <fwd = 3, bwd = 5> {
  }
}

// -----

// Tests that a step that already holds jobs is left alone.
// CHECK-LABEL: module @already_expanded
// CHECK-NEXT:    sched.step stages = 1, microbatches = 1, workers = 1 {
// CHECK-NEXT:      %[[F:.*]] = sched.forward(0, 0) on 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0) grad %[[F]] on 0{{$}}
// CHECK-NEXT:    }
module @already_expanded {
  sched.step stages = 1, microbatches = 1, workers = 1 {
    %0 = sched.forward(0, 0) on 0
    %1 = sched.backward(0, 0) grad %0 on 0
  }
}

// -----

// Tests the size of a larger expansion: 2*S*B jobs.
// RUN: pipeline-opt %S/Inputs/large-spec.mlir --sched-expand | grep -c "sched\.\(forward\|backward\)" | FileCheck %s --check-prefix=COUNT
// COUNT: 2048
