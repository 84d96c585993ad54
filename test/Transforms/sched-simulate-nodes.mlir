// RUN: pipeline-opt -split-input-file --pipeline-schedule --sched-stats %s -o /dev/null | FileCheck %s
// RUN: pipeline-opt -split-input-file --sched-expand --sched-place --sched-simulate=transfer-time=2 --sched-stats %s -o /dev/null | FileCheck %s --check-prefix=OVERRIDE

// Tests that a transfer between nodes takes the nodes' link, and that the
// statistics count the messages and bytes that cross nodes: GPipe on two
// workers, one microbatch, F = 1, B = 2: F0, a transfer, F1 B1, a
// transfer, B0. One node: 1 + 1 + 3 + 1 + 2 = 8. Two nodes (transfer 5):
// 1 + 5 + 3 + 5 + 2 = 16. `transfer-time` overrides the link inside a
// node; the inter-node link keeps its own time, or follows it.

// CHECK: latency: 8 ticks
// CHECK: between nodes: 0 messages received, 0 bytes (per worker: [0, 0])
// OVERRIDE: latency: 10 ticks
sched.step @one_node stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe
    nodes <map = [0, 0], transfer = 5> cost <fwd = 1, bwd = 2, transfer = 1> {
}

// -----

// CHECK: latency: 16 ticks
// CHECK: between nodes: 2 messages received, 8192 bytes (per worker: [1, 1])
// CHECK: replayed: 16 ticks
// OVERRIDE: latency: 16 ticks
sched.step @two_nodes stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe
    nodes <size = 1, transfer = 5> cost <fwd = 1, bwd = 2, transfer = 1, act = 4096> {
}

// -----

// CHECK: latency: 8 ticks
// OVERRIDE: latency: 10 ticks
sched.step @same_link stages = 2, microbatches = 1, workers = 2 strategy #sched.gpipe
    nodes <size = 1> cost <fwd = 1, bwd = 2, transfer = 1> {
}

// -----

// Tests that on 1F1B over 4 workers in nodes of 2, only the hop between
// workers 1 and 2 pays the inter-node time (each microbatch's activation
// into worker 2 and gradient into worker 1 cross): against the same step with
// every hop at 5 (a node per worker: the same as one node whose link
// takes 5) and every hop at 1 (one node). The stats print no step names:
// the latencies are checked in the order of the steps.
// CHECK: latency: 73 ticks
// CHECK: between nodes: 16 messages received, 0 bytes (per worker: [0, 8, 8, 0])
sched.step @pairs stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    nodes <size = 2, transfer = 5> cost <fwd = 1, bwd = 2, transfer = 1> {
}

// -----

// CHECK: latency: 113 ticks
// CHECK: between nodes: 48 messages received, 0 bytes (per worker: [8, 16, 16, 8])
// CHECK: replayed: 243 ticks
sched.step @apart stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    nodes <size = 1, transfer = 5> cost <fwd = 1, bwd = 2, transfer = 1> {
}

// -----

// CHECK: latency: 49 ticks
// CHECK-NOT: between nodes
sched.step @together stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2, transfer = 1> {
}

// -----

// Tests that the replay of the rank programs times a message between nodes
// by the nodes' latency and bandwidth: a node per worker, 2 us and 1 GB/s
// between them, is the same step as one node whose link is that slow
// (1 ms per 1 MB activation), not the cost's 1 us and 10 GB/s.
// CHECK: predicted step time: 20.073 ms
sched.step @slow_between stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    nodes <size = 1, latency = 2000, bandwidth = 1000000000>
    cost <fwd = 1000, bwd = 2000, act = 1000000, latency = 1000, bandwidth = 10000000000, unit = ns> {
}

// -----

// CHECK: predicted step time: 20.073 ms
sched.step @slow_link stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    cost <fwd = 1000, bwd = 2000, act = 1000000, latency = 2000, bandwidth = 1000000000, unit = ns> {
}

// -----

// CHECK: predicted step time: 2.053 ms
sched.step @fast_link stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    cost <fwd = 1000, bwd = 2000, act = 1000000, latency = 1000, bandwidth = 10000000000, unit = ns> {
}

// -----

// Tests that a gradient all-reduce across nodes takes NCCL's hierarchical
// form when it is faster than a flat ring. DDP, S = 2 on 4 workers: each
// worker runs one microbatch (6 us), then each stage's 8 MB gradient is
// all-reduced. One node (1 us + 0.1 ns/B): a ring of 4, 6 steps of
// (1000 + 2 MB * 0.1) = 1.206 ms per stage, 2.418 ms in all. Nodes of 2,
// 10 us + 1 ns/B between them: the flat ring 6 * (10000 + 2 MB * 1) =
// 12.06 ms; the hierarchy 401 us inside, 2 * (10000 + 4 MB * 1) = 8.02 ms
// between, 401 us inside: 8.822 ms per stage, 17.650 ms in all.
// CHECK: predicted step time: 2.418 ms
sched.step @ddp_one_node stages = 2, microbatches = 4, workers = 4 strategy #sched.ddp
    cost <fwd = 1000, bwd = 2000, act = 1000, weights = 8000000, latency = 1000, bandwidth = 10000000000, unit = ns> {
}

// -----

// CHECK: predicted step time: 17.650 ms
sched.step @ddp_two_nodes stages = 2, microbatches = 4, workers = 4 strategy #sched.ddp
    nodes <size = 2, latency = 10000, bandwidth = 1000000000>
    cost <fwd = 1000, bwd = 2000, act = 1000, weights = 8000000, latency = 1000, bandwidth = 10000000000, unit = ns> {
}
