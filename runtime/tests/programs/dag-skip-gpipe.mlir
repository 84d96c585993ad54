// A 6-stage chain with a skip connection from stage 1 to stage 4: GPipe, a stage per rank.
sched.step stages = 6, microbatches = 4, workers = 6
    graph <0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4, 4 -> 5, 1 -> 4>
    strategy #sched.gpipe cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
