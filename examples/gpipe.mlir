// GPipe: 4 stages on 4 workers, 8 microbatches, fill-drain.
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2> {
}
