// DDP: every worker runs whole microbatches on a full replica (W = B).
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.ddp
    cost <fwd = 1, bwd = 2> {
}
