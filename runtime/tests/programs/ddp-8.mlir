// DDP on 8 ranks (GPU checks).
sched.step stages = 8, microbatches = 16, workers = 8 strategy #sched.ddp
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
