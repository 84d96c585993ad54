// DDP on 2 ranks, stages 0 and 2 tied: each rank owns both and sums
// locally after the all-reduces: runtime/tests/integration/tied.test.
sched.step stages = 3, microbatches = 4, workers = 2 strategy #sched.ddp tied <[0, 2]>
    cost <fwd = 1, bwd = 2, act = 2048, weights = 16384> {
}
