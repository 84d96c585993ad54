// DDP on 2 ranks, staion/tied.test.
sched.step stages = 6, microbatches = 4, workers = 2 strategy #sched.ddp tied <[0, 2]>
    cost <fwd = 1, bwd = 2, act = 2048, weights = 16384> {
}
