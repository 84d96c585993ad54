// RUN: embed-opt %s --embed-lower | FileCheck %s

// Tests that a compiler built against the installed package lowers a spec
// with pipesched's pipeline and its own options (FSDP: each worker fetches
// the other stage's weights two jobs ahead).
// CHECK-LABEL: sched.program stages = 2, microbatches = 2, workers = 2
// CHECK:         sched.rank 0 owns [0] {
// CHECK-NEXT:      sched.group {
// CHECK-NEXT:        sched.fetch_weights(1) from 1
// CHECK:         sched.rank 1 owns [1] {
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.fsdp cost <act = 64, weights = 256> {
}
