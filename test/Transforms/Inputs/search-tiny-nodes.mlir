sched.step stages = 3, microbatches = 3, workers = 3 nodes <size = 1, transfer = 3> cost <fwd = 1, bwd = 2> {
}
