module @tight {
  sched.step stages = 4, microbatches = 8, workers = 4 cost <fwd = 1, bwd = 2> {
  }
}
