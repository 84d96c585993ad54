// DDP on 2 ranks, 2 microbatches each: gradients all-reduced across ranks.
sched.step stages = 2, microbatches = 4, workers = 2 strategy #sched.ddp
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
