// RUN: pipeline-opt %s --split-input-file | pipeline-opt --split-input-file | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-simulate | FileCheck %s --check-prefix=SIM

// Tests a DAG of stages: two encoder legs (stages 0 and 1) feed a decoder
// (stage 2). The decoder's forward takes both activations, its backward
// starts from its own output (it computes the loss) and rereads both; each
// leg's backward takes the decoder's gradient.
// CHECK-LABEL: sched.step stages = 3, microbatches = 1, workers = 3 graph <0 -> 2, 1 -> 2>
// CHECK-NEXT:    %[[E0:.*]] = sched.forward(0, 0)
// CHECK-NEXT:    %[[E1:.*]] = sched.forward(1, 0)
// CHECK-NEXT:    %[[D:.*]] = sched.forward(2, 0) from %[[E0]], %[[E1]]
// CHECK-NEXT:    %[[G:.*]] = sched.backward(2, 0) grad %[[D]] act %[[E0]], %[[E1]]
// CHECK-NEXT:    sched.backward(1, 0) grad %[[G]]{{$}}
// CHECK-NEXT:    sched.backward(0, 0) grad %[[G]]{{$}}
sched.step stages = 3, microbatches = 1, workers = 3 graph <0 -> 2, 1 -> 2> strategy #sched.gpipe {
  %0 = sched.forward(0, 0)
  %1 = sched.forward(1, 0)
  %2 = sched.forward(2, 0) from %0, %1
  %3 = sched.backward(2, 0) grad %2 act %0, %1
  %4 = sched.backward(1, 0) grad %3
  %5 = sched.backward(0, 0) grad %3
}

// -----

// Tests expansion and simulation of the same DAG with uneven legs (leg 1 is
// twice as slow), one stage per worker: both legs run at once and the
// decoder waits for the slower one.
// SIM-LABEL: sched.step stages = 3, microbatches = 2, workers = 3 graph <0 -> 2, 1 -> 2>
// SIM-NEXT:    %[[E0:.*]] = sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1{{$}}
// SIM-NEXT:    %[[E1:.*]] = sched.forward(1, 0) on 1 weights 1 order 0 at 0 to 2{{$}}
// SIM-NEXT:    %[[D:.*]] = sched.forward(2, 0) from %[[E0]], %[[E1]] on 2 weights 2 order 0 at 2 to 3{{$}}
// SIM-NEXT:    %[[G:.*]] = sched.backward(2, 0) grad %[[D]] act %[[E0]], %[[E1]] on 2 weights 2 order 1 at 3 to 5{{$}}
// SIM-NEXT:    sched.backward(1, 0) grad %[[G]] on 1 weights 1 order 2 at 5 to 9{{$}}
// SIM-NEXT:    sched.backward(0, 0) grad %[[G]] on 0 weights 0 order 2 at 5 to 7{{$}}
// SIM:         sched.backward(1, 1) {{.*}} at 9 to 13{{$}}
sched.step stages = 3, microbatches = 2, workers = 3 graph <0 -> 2, 1 -> 2>
    compute affine_map<(s, b, d) -> (s)> priority <fill_drain>
    cost <fwd = [1, 2, 1], bwd = [2, 4, 2]> {
}
