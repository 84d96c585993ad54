// DDP with a single worker: every job on rank 0 (the single-GPU program).
sched.step stages = 2, microbatches = 2, workers = 1 strategy #sched.ddp
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
