// GPipe on 4 workers: 4 stages, 8 microbatches, one stage per worker.
sched.step stages = 4, microbatches = 8, workers = 4 cost <fwd = 1, bwd = 2> {
}
