sched.step stages = 4, microbatches = 16, workers = 4 cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000> {
}
