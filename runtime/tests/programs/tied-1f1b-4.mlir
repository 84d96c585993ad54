// 1F1B on 4 ranks with the first and the last stage sharing one weight
// (Megatron's embedding group): runtime/tests/integration/tied.test.
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b tied <[0, 3]>
    cost <fwd = 1, bwd = 2, act = 2048, weights = 16384> {
}
