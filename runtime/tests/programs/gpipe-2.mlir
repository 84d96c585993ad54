// GPipe, one stage per rank.
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
