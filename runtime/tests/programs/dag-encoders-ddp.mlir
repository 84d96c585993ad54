// Two encoder legs (stages 0, 1) feed a decoder (stage 2): DDP on 2 ranks.
sched.step stages = 3, microbatches = 4, workers = 2
    graph <0 -> 2, 1 -> 2>
    strategy #sched.ddp cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
