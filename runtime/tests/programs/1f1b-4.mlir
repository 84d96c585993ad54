// 1F1B on 4 ranks.
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
