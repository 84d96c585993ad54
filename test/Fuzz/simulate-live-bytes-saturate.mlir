// Fuzz finding (fuzz-mlir-pipeline, UBSan, from the seed
// ubsan-stats-bytes-overflow.mlir): --sched-simulate added `act` bytes to a
// worker's live count without a bound, a signed overflow. Release builds
// wrapped, and when the sum crossed 2^63 the simulator's peak no longer
// matched the saturating accounting: "simulated timeline is invalid: the
// reported peak live memory of worker 0 differs from its accounting". The
// simulator now saturates at INT64_MAX like the accounting, and both specs
// lower.
// RUN: pipeline-opt %s -split-input-file --pipeline-lower | FileCheck %s
// RUN: pipeline-opt %s -split-input-file --sched-expand --sched-place --sched-simulate --sched-stats -o /dev/null | FileCheck %s --check-prefix=STATS

// Four live activations of 2^62 + 1 bytes on worker 0.
// CHECK: sched.program
// STATS: memory: peak 4 live activations (9223372036854775807 bytes) on the busiest worker
sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 4611686018427387905> {
}

// -----

// The fuzzer's input: INT64_MAX bytes of activations and weights.
// CHECK: sched.program
// STATS: memory: peak 4 live activations (9223372036854775807 bytes) on the busiest worker
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.fsdp cost <fwd = 1, bwd = 2, act = 9223372036854775807, weights = 9223372036854775807> {
}
