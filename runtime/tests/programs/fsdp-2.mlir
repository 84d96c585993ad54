// FSDP on 2 ranks: weights fetched from their owner, gradients reduced onto it.
sched.step stages = 2, microbatches = 2, workers = 2 strategy #sched.fsdp
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
