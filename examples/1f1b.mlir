// 1F1B (PipeDream-flush): GPipe's placement, backward-first priority.
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b
    cost <fwd = 1, bwd = 2> {
}
