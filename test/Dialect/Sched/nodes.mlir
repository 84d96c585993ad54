// RUN: pipeline-opt %s | FileCheck %s
// RUN: pipeline-opt %s | pipeline-opt | FileCheck %s

// Tests that a step's nodes round-trip: workers per node, or a node per
// worker, with the inter-node link's costs printed only when given.

// CHECK-LABEL: sched.step @per_node
// CHECK-SAME: nodes <size = 2, transfer = 5> cost
sched.step @per_node stages = 4, microbatches = 8, workers = 4 nodes <size = 2, transfer = 5> cost <fwd = 1, bwd = 2, transfer = 1> {
}

// CHECK-LABEL: sched.step @mapped
// CHECK-SAME: nodes <map = [0, 1, 0, 1], transfer = 5, latency = 9000, bandwidth = 12500000000> cost
sched.step @mapped stages = 4, microbatches = 8, workers = 4 nodes <map = [0, 1, 0, 1], latency = 9000, bandwidth = 12500000000, transfer = 5> cost <fwd = 1, bwd = 2> {
}

// CHECK-LABEL: sched.step @link_of_the_cost
// CHECK-SAME: nodes <size = 8> {
sched.step @link_of_the_cost stages = 4, microbatches = 8, workers = 16 nodes <size = 8> {
}
