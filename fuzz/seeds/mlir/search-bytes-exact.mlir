// search: memory-limit-bytes=6000 top=3 exact
sched.step stages = 2, microbatches = 3, workers = 2 cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, weights = 2000> {
}
