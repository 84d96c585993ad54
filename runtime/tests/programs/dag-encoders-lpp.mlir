// Two encoder legs (stages 0, 1) feed a decoder (stage 2): LPP, 2 rings of 3.
sched.step stages = 3, microbatches = 4, workers = 6
    graph <0 -> 2, 1 -> 2>
    strategy #sched.lpp<groups = 2, ring = 3> cost <fwd = 1, bwd = 2, act = 4096, weights = 65536> {
}
