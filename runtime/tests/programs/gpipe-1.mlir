// GPipe with both stages on one rank (the single-GPU program).
sched.step stages = 2, microbatches = 4, workers = 1 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
