// FSDP: DDP's compute, stage s's weights sharded onto worker s.
sched.step stages = 4, microbatches = 4, workers = 4 strategy #sched.fsdp
    cost <fwd = 1, bwd = 2> {
}
