sched.step stages = 16, microbatches = 64, workers = 16 {
}
