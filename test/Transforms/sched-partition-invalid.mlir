// RUN: pipeline-opt %s -split-input-file -verify-diagnostics --sched-partition="layers=%S/Inputs/partition-small.json memory-limit-bytes=1000"

// Tests that only a spec is partitioned: its jobs would keep the old stages.
// expected-error @below {{partition-small.json': the step already holds jobs: partition a spec, before --sched-expand}}
sched.step stages = 1, microbatches = 1, workers = 1 {
  %0 = sched.forward(0, 0)
  %1 = sched.backward(0, 0) grad %0
}

// -----

// Tests that a stage graph (not a chain) is refused.
// expected-error @below {{partition-small.json': the step has a stage graph; partitioning splits a chain of layers}}
sched.step stages = 3, microbatches = 1, workers = 3 graph <0 -> 2, 1 -> 2> strategy #sched.gpipe {
}

// -----

// Tests that every stage needs a layer: 5 stages, 4 layers.
// expected-error @below {{partition-small.json': cannot split 4 layers into 5 stages: every stage needs a layer}}
sched.step stages = 5, microbatches = 5, workers = 5 strategy #sched.1f1b {
}

// -----

// Tests a memory limit no partition fits, naming the stage that cannot: on
// one stage the four layers' 1200 weight bytes alone exceed 1000.
// expected-error @below {{partition-small.json': no partition into 1 stages fits in 1000 bytes per stage: the one needing the least memory still needs 1210 bytes on stage 0 (layers 0..3 ('a'..'d'): weights 1200 + 1 x input 10 = 1210 bytes)}}
sched.step stages = 1, microbatches = 4, workers = 1 strategy #sched.1f1b {
}

// -----

// Tests the same on two stages: [a b] [c d] comes closest, stage 1 needing
// 1000 + 1 x 10 bytes.
// expected-error @below {{partition-small.json': no partition into 2 stages fits in 1000 bytes per stage: the one needing the least memory still needs 1010 bytes on stage 1 (layers 2..3 ('c'..'d'): weights 1000 + 1 x input 10 = 1010 bytes)}}
sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.1f1b {
}

// -----

// Tests that a split backward needs the layers' weight-gradient halves.
// expected-error @below {{partition-small.json': the step splits its backward (bwd_w) but the layers give no 'bwd_w'}}
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.1f1b cost <fwd = 1, bwd = 1, bwd_w = 1> {
}

// -----

// Tests that per-stage figures of the old stages are refused.
// expected-error @below {{partition-small.json': the cost has per-stage figures the layers cannot give (fwd_bwd, a list of optimizer steps)}}
sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.1f1b cost <fwd = 1, bwd = 2, optimizer = [1, 2]> {
}
