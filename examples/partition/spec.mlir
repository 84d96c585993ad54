sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b {
}
