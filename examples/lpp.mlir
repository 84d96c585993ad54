// Looped pipeline: 2 groups of 4 workers, h(s, b) = 4 (b mod 2) + s mod 4.
sched.step stages = 4, microbatches = 8, workers = 8
    strategy #sched.lpp<groups = 2, ring = 4> cost <fwd = 1, bwd = 2> {
}
