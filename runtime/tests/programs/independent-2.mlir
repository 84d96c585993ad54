// `graph <>`: two independent stages, each reading the data and computing a
// loss (not the chain); GPipe puts one on each rank.
sched.step stages = 2, microbatches = 2, workers = 2 graph <>
    strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
