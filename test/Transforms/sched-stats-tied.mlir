// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-simulate --sched-stats -o /dev/null | FileCheck %s
// RUN: pipeline-opt %s --split-input-file --sched-expand --sched-place --sched-simulate --sched-stats=json -o /dev/null | FileCheck %s --check-prefix=JSON

// Tests the tied traffic of 1F1B on 4 workers with stages 0 and 3 tied:
// workers 0 and 3 each send and receive the tied gradient once (the cost's
// `weights` bytes); the others take no part. The replay charges the tied
// all-reduce one transfer (1 tick): 67 ticks against 66 untied (below).
// CHECK-LABEL: sched.step stages = 4, microbatches = 8, workers = 4
// CHECK:       traffic: 24 activations and 24 gradients received, 0 weight fetches
// CHECK-NEXT:  tied weights: 2 messages, 131072 bytes (per worker: messages [1, 0, 0, 1], bytes [65536, 0, 0, 65536])
// CHECK:       replayed: 67 ticks
// JSON:        "per_worker": [
// JSON:          "tied_bytes": 65536,
// JSON-NEXT:     "tied_messages": 1,
// JSON:          "worker": 0
// JSON:          "tied_bytes": 0,
// JSON-NEXT:     "tied_messages": 0,
// JSON:          "worker": 1
// JSON:          "tied_bytes": 0,
// JSON-NEXT:     "tied_messages": 0,
// JSON:          "worker": 2
// JSON:          "tied_bytes": 65536,
// JSON-NEXT:     "tied_messages": 1,
// JSON:          "worker": 3
// JSON:        "tied_bytes": 131072,
// JSON-NEXT:   "tied_messages": 2,
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b tied <[0, 3]> cost <fwd = 1, bwd = 2, act = 4096, weights = 65536, transfer = 1> {
}

// -----

// Tests the same step untied: no tied line, 66 ticks replayed.
// CHECK-LABEL: sched.step stages = 4, microbatches = 8, workers = 4
// CHECK:       traffic: 24 activations and 24 gradients received, 0 weight fetches
// CHECK-NEXT:  memory:
// CHECK:       replayed: 66 ticks
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b cost <fwd = 1, bwd = 2, act = 4096, weights = 65536, transfer = 1> {
}

// -----

// Tests DDP: each worker owns both tied stages and sums locally: no tied
// traffic.
// CHECK-LABEL: sched.step stages = 4, microbatches = 4, workers = 4
// CHECK:       tied weights: 0 messages, 0 bytes (per worker: messages [0, 0, 0, 0], bytes [0, 0, 0, 0])
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.ddp tied <[0, 3]> cost <fwd = 1, bwd = 2, weights = 1000> {
}

// -----

// Tests LPP (2 groups of 4): the replicas of stages 0 and 3 (workers 0, 4
// and 3, 7) sum the tied gradient together.
// CHECK-LABEL: sched.step stages = 4, microbatches = 8, workers = 8
// CHECK:       tied weights: 4 messages, 4000 bytes (per worker: messages [1, 0, 0, 1, 1, 0, 0, 1], bytes [1000, 0, 0, 1000, 1000, 0, 0, 1000])
sched.step stages = 4, microbatches = 8, workers = 8 strategy #sched.lpp<groups = 2, ring = 4> tied <[0, 3]> cost <fwd = 1, bwd = 2, weights = 1000> {
}

// -----

// Tests two groups of three stages on interleaved 1F1B (stage s on worker
// s mod 4): [0, 5, 7] on workers 0, 1, 3; [1, 2, 6] on workers 1 and 2
// (which owns two of them): worker 1 takes part in both.
// CHECK-LABEL: sched.step stages = 8, microbatches = 8, workers = 4
// CHECK:       tied weights: 5 messages, 5000 bytes (per worker: messages [1, 2, 1, 1], bytes [1000, 2000, 1000, 1000])
sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2> tied <[0, 5, 7], [1, 2, 6]> cost <fwd = 1, bwd = 2, weights = 1000> {
}
