// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-simulate | FileCheck %s

// Tests 1F1B on 2 workers, 2 microbatches (fwd 1, bwd 2 ticks): every job
// gets its position in its worker's order and its simulated interval.
// Worker 0 runs F0 F1 B0 B1 (warm-up of S-1-s = 1 forward, then one more
// before its first backward); worker 1 alternates.
// CHECK-LABEL: module @one_f1b
// CHECK-NEXT:    sched.step
// CHECK-NEXT:      sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1{{$}}
// CHECK-NEXT:      sched.forward(1, 0) from %{{.*}} on 1 weights 1 order 0 at 1 to 2{{$}}
// CHECK-NEXT:      sched.backward(1, 0) grad %{{.*}} act %{{.*}} on 1 weights 1 order 1 at 2 to 4{{$}}
// CHECK-NEXT:      sched.backward(0, 0) grad %{{.*}} on 0 weights 0 order 2 at 4 to 6{{$}}
// CHECK-NEXT:      sched.forward(0, 1) on 0 weights 0 order 1 at 1 to 2{{$}}
// CHECK-NEXT:      sched.forward(1, 1) from %{{.*}} on 1 weights 1 order 2 at 4 to 5{{$}}
// CHECK-NEXT:      sched.backward(1, 1) grad %{{.*}} act %{{.*}} on 1 weights 1 order 3 at 5 to 7{{$}}
// CHECK-NEXT:      sched.backward(0, 1) grad %{{.*}} on 0 weights 0 order 3 at 7 to 9{{$}}
// CHECK-NEXT:    }
module @one_f1b {
  sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.1f1b {
  }
}

// -----

// Tests uneven stage costs: stage 1 is three times slower; the worker of
// stage 2 runs B0 while F1 is still on its way (a list scheduler never
// idles with a ready job; the priority only breaks ties).
// CHECK-LABEL: module @uneven
// CHECK:         sched.forward(1, 0) from %{{.*}} on 1 weights 1 order 0 at 1 to 4{{$}}
// CHECK:         sched.backward(2, 0) {{.*}} order 1 at 5 to 7{{$}}
// CHECK:         sched.backward(1, 0) {{.*}} order 2 at 7 to 13{{$}}
// CHECK:         sched.forward(2, 1) {{.*}} order 2 at 7 to 8{{$}}
// CHECK:         sched.backward(0, 1) {{.*}} order 3 at 19 to 21{{$}}
module @uneven {
  sched.step stages = 3, microbatches = 2, workers = 3 strategy #sched.gpipe
      cost <fwd = [1, 3, 1], bwd = [2, 6, 2]> {
  }
}

// -----

// Tests a tree-shaped dependency through explicit placement: with DDP
// every microbatch runs on its own worker, concurrently.
// CHECK-LABEL: module @ddp
// CHECK:         sched.backward(0, 0) {{.*}} on 0 weights 0 order 3 at 4 to 6{{$}}
// CHECK:         sched.backward(0, 1) {{.*}} on 1 weights 1 order 3 at 4 to 6{{$}}
module @ddp {
  sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.ddp {
  }
}

// -----

// Tests durations far beyond any interning table.
// CHECK-LABEL: module @long_jobs
// CHECK:         sched.backward(0, 0) {{.*}} at 99999999999 to 100000000001{{$}}
module @long_jobs {
  sched.step stages = 1, microbatches = 1, workers = 1 strategy #sched.ddp
      cost <fwd = 99999999999, bwd = 2> {
  }
}
