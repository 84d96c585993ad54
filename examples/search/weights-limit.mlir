// 8 stages on 4 workers, zero bubble's 1:1:1 costs; a stage's weights
// weigh as much as four activations (docs/search.md).
sched.step stages = 8, microbatches = 16, workers = 4
    cost <fwd = 1, bwd = 1, bwd_w = 1, act = 1000, weights = 4000> {
}
