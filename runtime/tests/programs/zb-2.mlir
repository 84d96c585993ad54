// Zero bubble: 1F1B with the backward split (backward_weight ops).
sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2, bwd_w = 1, act = 4096, weights = 65536> {
}
