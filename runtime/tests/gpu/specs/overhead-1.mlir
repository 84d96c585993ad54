// The host overhead per op (scripts/gpu-kit/measure.sh): many small ops on
// one rank, a model so small that launching, not computing, makes the step.
sched.step stages = 4, microbatches = 32, workers = 1 strategy #sched.gpipe
    cost <fwd = 1, bwd = 2> {
}
