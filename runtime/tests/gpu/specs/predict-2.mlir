// Predicted against measured step time on two ranks (scripts/gpu-kit/
// measure.sh): activations and gradients cross between the ranks.
sched.step stages = 2, microbatches = 8, workers = 2 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2> {
}
