// Two encoder legs (stages 0, 1) feed a decoder (stage 2): GPipe, a stage per rank.
sched.step stages = 3, microbatches = 4, workers = 3
    graph <0 -> 2, 1 -> 2>
    strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
