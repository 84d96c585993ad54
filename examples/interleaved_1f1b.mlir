// Interleaved 1F1B (Megatron): 2 chunks per worker, stage s on worker s mod 4.
sched.step stages = 8, microbatches = 8, workers = 4
    strategy #sched.interleaved_1f1b<chunks = 2> cost <fwd = 1, bwd = 2> {
}
