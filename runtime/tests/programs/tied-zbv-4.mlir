// ZBV on 4 ranks: the V puts stages 0 and 7 on rank 0, which sums their
// tied gradient alone: runtime/tests/integration/tied.test.
sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.zbv tied <[0, 7]>
    cost <fwd = 1, bwd = 1, bwd_w = 1, act = 2048, weights = 16384> {
}
