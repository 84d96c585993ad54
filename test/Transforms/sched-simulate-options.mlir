// Tests the options of --sched-simulate.

// transfer-time adds to every input made on another worker, not to inputs
// made on the same worker.
// RUN: pipeline-opt %s --sched-expand --sched-place --sched-simulate=transfer-time=5 | FileCheck %s --check-prefix=XFER
// XFER:      sched.forward(0, 0) on 0 weights 0 order 0 at 0 to 1{{$}}
// XFER-NEXT: sched.forward(1, 0) from %{{.*}} on 1 weights 1 order 0 at 6 to 7{{$}}
// XFER-NEXT: sched.backward(1, 0) {{.*}} order 3 at 9 to 11{{$}}
// XFER-NEXT: sched.backward(0, 0) {{.*}} order 3 at 16 to 18{{$}}

// A memory cap of 1 activation per worker makes GPipe's worker 0 wait for
// each backward before its next forward (order F0 B0 F1 B1).
// RUN: pipeline-opt %s --sched-expand --sched-place --sched-simulate=memory-cap=1 | pipeline-translate --sched-to-torch-csv | FileCheck %s --check-prefix=CAP
// CAP:      0F0,,0B0,0F1,,0B1,0F2,,0B2
// CAP-NEXT: ,1F0,1B0,,1F1,1B1,,1F2,1B2

// The same cap in bytes (act = 100 bytes per activation, cap 150 bytes).
// RUN: pipeline-opt %s --sched-expand --sched-place --sched-simulate=memory-cap-bytes=150 | pipeline-translate --sched-to-torch-csv | FileCheck %s --check-prefix=CAP

// Without a cap, fill-drain runs every forward first.
// RUN: pipeline-opt %s --sched-expand --sched-place --sched-simulate | pipeline-translate --sched-to-torch-csv | FileCheck %s --check-prefix=NOCAP
// NOCAP:      0F0,0F1,0F2,,0B0,0B1,0B2
// NOCAP-NEXT: ,1F0,1F1,1F2,1B0,1B1,1B2

// 1F1B's own cap (S - s) can be lifted; backward-first then acts alone,
// and worker 0 runs a third forward before its first backward.
// RUN: sed 's/#sched.gpipe/#sched.1f1b/' %s | pipeline-opt --sched-expand --sched-place --sched-simulate | pipeline-translate --sched-to-torch-csv | FileCheck %s --check-prefix=ONEF1B
// ONEF1B:      0F0,0F1,,0B0,0F2,0B1,,0B2
// ONEF1B-NEXT: ,1F0,1B0,1F1,1B1,1F2,1B2
// RUN: sed 's/#sched.gpipe/#sched.1f1b/' %s | pipeline-opt --sched-expand --sched-place --sched-simulate=no-memory-cap | pipeline-translate --sched-to-torch-csv | FileCheck %s --check-prefix=ONEF1B-NOCAP
// ONEF1B-NOCAP:      0F0,0F1,0F2,,0B0,,0B1,,0B2
// ONEF1B-NOCAP-NEXT: ,1F0,1B0,1F1,1B1,1F2,1B2

sched.step stages = 2, microbatches = 3, workers = 2 strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 100> {
}
