// RUN: pipeline-opt %s | pipeline-opt --mlir-print-local-scope | FileCheck %s
// RUN: pipeline-opt %s --mlir-print-op-generic | pipeline-opt --mlir-print-local-scope | FileCheck %s

// Tests that every named strategy, priority policy and explicit map
// round-trips. `#sched.1f1b` prints as `#sched<1f1b>`: MLIR's pretty form
// needs a mnemonic that starts with a letter; both forms parse.

// CHECK-LABEL: module @ddp
// CHECK-NEXT:    sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.ddp {
module @ddp {
  sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.ddp {
  }
}
// CHECK-LABEL: module @fsdp
// CHECK-NEXT:    strategy #sched.fsdp {
module @fsdp {
  sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.fsdp {
  }
}
// CHECK-LABEL: module @gpipe
// CHECK-NEXT:    strategy #sched.gpipe priority <breadth_first> {
module @gpipe {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.gpipe priority <breadth_first> {
  }
}
// CHECK-LABEL: module @one_f1b
// CHECK-NEXT:    strategy #sched<1f1b> {
module @one_f1b {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b {
  }
}
// CHECK-LABEL: module @one_f1b_long_form
// CHECK-NEXT:    strategy #sched<1f1b> {
module @one_f1b_long_form {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched<1f1b> {
  }
}
// CHECK-LABEL: module @interleaved
// CHECK-NEXT:    strategy #sched.interleaved_1f1b<chunks = 2> {
module @interleaved {
  sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2> {
  }
}
// CHECK-LABEL: module @lpp
// CHECK-NEXT:    strategy #sched.lpp<groups = 2, ring = 4> priority <depth_first> {
module @lpp {
  sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 2, ring = 4> priority <depth_first> {
  }
}
// CHECK-LABEL: module @fslpp
// CHECK-NEXT:    strategy #sched.fslpp<groups = 2, ring = 2> {
module @fslpp {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.fslpp<groups = 2, ring = 2> {
  }
}
// CHECK-LABEL: module @explicit_maps
// CHECK-NEXT:    sched.step stages = 4, microbatches = 8, workers = 8 compute affine_map<(d0, d1, d2) -> ((d1 mod 2) * 4 + d0 mod 4)> weights affine_map<(d0, d1, d2) -> (d0)> priority <fill_drain> {
module @explicit_maps {
  sched.step stages = 4, microbatches = 8, workers = 8
      compute affine_map<(s, b, d) -> ((b mod 2) * 4 + s mod 4)>
      weights affine_map<(s, b, d) -> (s)> priority <fill_drain> {
  }
}
// CHECK-LABEL: module @mixed
// CHECK-NEXT:    strategy #sched.lpp<groups = 2, ring = 4> weights affine_map<(d0, d1, d2) -> (d0 mod 4)> {
module @mixed {
  sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 2, ring = 4>
      weights affine_map<(s, b, d) -> (s mod 4)> {
  }
}
// CHECK-LABEL: module @interleaved_groups
// CHECK-NEXT:    strategy #sched.interleaved_1f1b<chunks = 2, group = torch> {
// CHECK:         strategy #sched.interleaved_1f1b<chunks = 2, group = 5> {
// CHECK:         strategy #sched.interleaved_1f1b<chunks = 2> {
module @interleaved_groups {
  sched.step stages = 8, microbatches = 10, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2, group = torch> {
  }
  sched.step stages = 8, microbatches = 10, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2, group = 5> {
  }
  sched.step stages = 8, microbatches = 10, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2, group = megatron> {
  }
}
// CHECK-LABEL: module @priority_key
// CHECK-NEXT:    strategy #sched<1f1b> priority affine_map<(d0, d1, d2) -> (d1 floordiv 4, d2, d0)> cap <none> {
// CHECK:         priority affine_map<(d0, d1, d2, d3) -> (d1, d3)> cap <units = [4, 3, 2, 1]> {
// CHECK:         priority <interleaved> cap <bytes = 4096> cost <fwd = 1, bwd = 2, act = 1024> {
module @priority_key {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
      priority affine_map<(s, b, d) -> (b floordiv 4, d, s)> cap <none> {
  }
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
      priority affine_map<(s, b, d, p) -> (b, p)> cap <units = [4, 3, 2, 1]> {
  }
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
      priority <interleaved> cap <bytes = 4096> cost <fwd = 1, bwd = 2, act = 1024> {
  }
}
