// Interleaved 1F1B: two stages per rank (stage s on rank s mod 2).
sched.step stages = 4, microbatches = 4, workers = 2 strategy #sched.interleaved_1f1b<chunks = 2>
    cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
