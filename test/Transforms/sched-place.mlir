// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place | FileCheck %s

// -----

// Tests ddp with B = 2W: gradient accumulation, microbatch b on worker b mod W.
// CHECK-LABEL: module @ddp
// CHECK-NEXT:    sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.ddp {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 2){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 2){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 2){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 2){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 3){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 3){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 3){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 3){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:    }
module @ddp {
  sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.ddp {
  }
}

// -----

// Tests fsdp: compute on b mod W, weights of stage s on s mod W (S > W wraps).
// CHECK-LABEL: module @fsdp
// CHECK-NEXT:    sched.step stages = 3, microbatches = 2, workers = 2 strategy #sched.fsdp {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 0 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 0 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 1){{.*}} on 1 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 1){{.*}} on 1 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 1){{.*}} on 1 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1){{.*}} on 1 weights 0{{$}}
// CHECK-NEXT:    }
module @fsdp {
  sched.step stages = 3, microbatches = 2, workers = 2 strategy #sched.fsdp {
  }
}

// -----

// Tests gpipe with S = 2W: two consecutive stages per worker.
// CHECK-LABEL: module @gpipe
// CHECK-NEXT:    sched.step stages = 4, microbatches = 2, workers = 2 strategy #sched.gpipe {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(3, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(3, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(3, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(3, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:    }
module @gpipe {
  sched.step stages = 4, microbatches = 2, workers = 2 strategy #sched.gpipe {
  }
}

// -----

// Tests 1f1b: GPipe's placement (its priority differs, see --sched-simulate).
// CHECK-LABEL: module @one_f1b
// CHECK-NEXT:    sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched<1f1b> cap <units = [2, 1]> {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 1){{.*}} on 1 weights 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:    }
module @one_f1b {
  sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.1f1b {
  }
}

// -----

// Tests interleaved 1F1B with v = 2: stage s on worker s mod W, and the
// static order written as data (Megatron's warm-up of min(2(W-r-1) + W, 2)).
// CHECK-LABEL: module @interleaved
// CHECK-NEXT:    sched.step stages = 4, microbatches = 1, workers = 2 strategy #sched.interleaved_1f1b<chunks = 2> {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0 order 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 1 weights 1 order 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 0){{.*}} on 0 weights 0 order 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(3, 0){{.*}} on 1 weights 1 order 1{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(3, 0){{.*}} on 1 weights 1 order 2{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 0){{.*}} on 0 weights 0 order 2{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 1 weights 1 order 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0 order 3{{$}}
// CHECK-NEXT:    }
module @interleaved {
  sched.step stages = 4, microbatches = 1, workers = 2 strategy #sched.interleaved_1f1b<chunks = 2> {
  }
}

// -----

// Tests fslpp G = R = 2: compute h(s,b) = 2(b mod 2) + s mod 2, weights h(s,s) =
// 2(s mod 2) + s mod 2 (the seed prints the pair swapped; weights use the stage).
// CHECK-LABEL: module @fslpp
// CHECK-NEXT:    sched.step stages = 4, microbatches = 2, workers = 4 strategy #sched.fslpp<groups = 2, ring = 2> {
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 0){{.*}} on 1 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(3, 0){{.*}} on 1 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(3, 0){{.*}} on 1 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 0){{.*}} on 1 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 0){{.*}} on 0 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(0, 1){{.*}} on 2 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(1, 1){{.*}} on 3 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(2, 1){{.*}} on 2 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.forward(3, 1){{.*}} on 3 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(3, 1){{.*}} on 3 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(2, 1){{.*}} on 2 weights 0{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(1, 1){{.*}} on 3 weights 3{{$}}
// CHECK-NEXT:      %{{.*}} = sched.backward(0, 1){{.*}} on 2 weights 0{{$}}
// CHECK-NEXT:    }
module @fslpp {
  sched.step stages = 4, microbatches = 2, workers = 4 strategy #sched.fslpp<groups = 2, ring = 2> {
  }
}

// -----

// Tests the LPP example of the reference sheet: S=4, B=8, W=8, G=2, R=4
// places job (s=1, b=3) on worker 5 = 4*(3 mod 2) + 1 mod 4.
// CHECK-LABEL: module @lpp
// CHECK:         sched.forward(1, 3) {{.*}} on 5 weights 5{{$}}
// CHECK:         sched.backward(1, 3) {{.*}} on 5 weights 5{{$}}
// CHECK:         sched.forward(2, 6) {{.*}} on 2 weights 2{{$}}
// CHECK:         sched.forward(3, 7) {{.*}} on 7 weights 7{{$}}
module @lpp {
  sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 2, ring = 4> {
  }
}

// -----

// Tests explicit maps, the direction dimension, and a placement written by
// hand, which the pass keeps: here the backward runs on the other worker.
// CHECK-LABEL: module @explicit
// CHECK-NEXT:    sched.step
// CHECK-NEXT:      %[[F0:.*]] = sched.forward(0, 0) on 0 weights 0{{$}}
// CHECK-NEXT:      %[[F1:.*]] = sched.forward(1, 0) from %[[F0]] on 1 weights 0{{$}}
// CHECK-NEXT:      %[[B1:.*]] = sched.backward(1, 0) grad %[[F1]] act %[[F0]] on 0 weights 0{{$}}
// CHECK-NEXT:      sched.backward(0, 0) grad %[[B1]] on 1 weights 1{{$}}
module @explicit {
  sched.step stages = 2, microbatches = 1, workers = 2
      compute affine_map<(s, b, d) -> ((s + d) mod 2)> weights affine_map<(s, b, d) -> (0)> {
    %0 = sched.forward(0, 0)
    %1 = sched.forward(1, 0) from %0
    %2 = sched.backward(1, 0) grad %1 act %0
    %3 = sched.backward(0, 0) grad %2 on 1 weights 1
  }
}

// -----

// Tests that a strategy and an explicit weights map mix: LPP compute,
// weights on stage s mod 2.
// CHECK-LABEL: module @mixed
// CHECK:         sched.forward(1, 1) {{.*}} on 3 weights 1{{$}}
module @mixed {
  sched.step stages = 2, microbatches = 2, workers = 4 strategy #sched.lpp<groups = 2, ring = 2>
      weights affine_map<(s, b, d) -> (s mod 2)> {
  }
}

// -----

// Tests the split backward: the weight-gradient job has d = 2.
// CHECK-LABEL: module @split
// CHECK:         sched.backward_weight(0, 0) after %{{.*}} on 2 weights 2{{$}}
module @split {
  sched.step stages = 1, microbatches = 1, workers = 3
      compute affine_map<(s, b, d) -> (d)> cost <fwd = 1, bwd = 1, bwd_w = 1> {
  }
}
