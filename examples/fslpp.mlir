// Fully sharded looped pipeline: LPP's compute, weights on h(s, s).
sched.step stages = 4, microbatches = 8, workers = 4
    strategy #sched.fslpp<groups = 2, ring = 2> cost <fwd = 1, bwd = 2> {
}
