sched.step stages = 3, microbatches = 6, workers = 6 strategy #sched.lpp<groups = 6, ring = 1> {
}
