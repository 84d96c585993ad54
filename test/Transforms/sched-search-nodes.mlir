// RUN: pipeline-opt --sched-search="top=3 memory-limit-bytes=8000" %s | FileCheck %s
// RUN: pipeline-opt --sched-search="top=200 memory-limit-bytes=8000" %s -o /dev/null | FileCheck %s --check-prefix=BOTH
// RUN: pipeline-opt --sched-search="memory-limit=2 exact" %S/Inputs/search-tiny-nodes.mlir -o /dev/null | FileCheck %s --check-prefix=EXACT

// Tests that a spec with nodes is searched on the other mappings of its
// workers to nodes too: a strided mapping (workers 0 and 2 on node 0) puts
// every pipeline hop between nodes (10 ticks against 1); contiguous ranks
// keep two of the three hops inside a node and win, and the spec takes
// that mapping. The limit (one stage's weights and four activations)
// keeps the replicated and fetched weights of DDP and FSDP out.
module @strided {
  sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
      nodes <map = [0, 1, 0, 1], transfer = 10>
      cost <fwd = 1, bwd = 2, transfer = 1, act = 1000, weights = 4000> {
  }
}
// CHECK:      best 82, gap 241.7%; best named strategy #sched<1f1b> at 103
// CHECK:         1       82  241.7%     4        8000  strategy #sched.gpipe priority <backward_first> cap <units = 4> nodes <size = 2, transfer = 10>
// CHECK-LABEL: module @strided
// CHECK-NEXT:    sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.gpipe priority <backward_first> cap <units = 4> nodes <size = 2, transfer = 10> cost

// 1F1B on either mapping: contiguous 103, strided (the spec's own) 193.
// BOTH-DAG: 103 {{.*}} strategy #sched<1f1b> nodes <size = 2, transfer = 10>
// BOTH-DAG: 193 {{.*}} strategy #sched<1f1b>{{$}}

// The exact solver does not model the link between nodes: it is not run
// on a step with nodes rather than claim an optimum of another step.
// EXACT: exact optimum not searched: nodes (the link between them) are not modelled
