// Breadth-first under a visible cap of 3 live activations: every worker
// fills its cap with stage-0 work and none can start the next stage.
sched.step stages = 8, microbatches = 8, workers = 4 strategy #sched.interleaved_1f1b<chunks = 2> priority <breadth_first> cap <units = 3> {
}
