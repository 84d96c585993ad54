// The MLP throughput measurement (scripts/gpu-kit/measure.sh): one rank
// runs 2 stages x 2 microbatches, each a stack of Linear + GELU layers.
sched.step stages = 2, microbatches = 2, workers = 1 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2> {
}
