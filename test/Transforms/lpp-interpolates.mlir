// Tests that LPP interpolates: G = 1, R = S places exactly as GPipe, and
// G = W = B, R = 1 exactly as DDP (same jobs, same edges, same workers).
// RUN: pipeline-opt %S/Inputs/lpp-as-gpipe.mlir --sched-expand --sched-place | grep "sched\.[fb]" > %t.lpp-gpipe
// RUN: sed 's/strategy #sched.lpp<groups = 1, ring = 4>/strategy #sched.gpipe/' %S/Inputs/lpp-as-gpipe.mlir | pipeline-opt --sched-expand --sched-place | grep "sched\.[fb]" > %t.gpipe
// RUN: diff %t.lpp-gpipe %t.gpipe
// RUN: pipeline-opt %S/Inputs/lpp-as-ddp.mlir --sched-expand --sched-place | grep "sched\.[fb]" > %t.lpp-ddp
// RUN: sed 's/strategy #sched.lpp<groups = 6, ring = 1>/strategy #sched.ddp/' %S/Inputs/lpp-as-ddp.mlir | pipeline-opt --sched-expand --sched-place | grep "sched\.[fb]" > %t.ddp
// RUN: diff %t.lpp-ddp %t.ddp
// The comparison is not vacuous: both placements use every worker.
// RUN: grep -c " on 3 weights 3$" %t.gpipe | FileCheck %s --check-prefix=GPIPE
// GPIPE: 12
// RUN: grep -c " on 5 weights 5$" %t.ddp | FileCheck %s --check-prefix=DDP
// DDP: 6
