sched.step stages = 4, microbatches = 6, workers = 4 strategy #sched.lpp<groups = 1, ring = 4> {
}
