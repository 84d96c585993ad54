// Predicted against measured step time on one rank (scripts/gpu-kit/
// measure.sh): GPipe's order does not depend on the costs, so the program
// profiled is the one the calibrated compile predicts.
sched.step stages = 4, microbatches = 8, workers = 1 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2> {
}
