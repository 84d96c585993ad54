// 1F1B on 8 ranks (GPU checks).
sched.step stages = 8, microbatches = 16, workers = 8 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
