// A 6-stage chain with a skip connection from stage 1 to stage 4: 1F1B, 2 stages per rank.
sched.step stages = 6, microbatches = 4, workers = 3
    graph <0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4, 4 -> 5, 1 -> 4>
    strategy #sched.1f1b cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
