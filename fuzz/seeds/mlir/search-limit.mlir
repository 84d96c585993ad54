// search: memory-limit=2 top=2
sched.step stages = 4, microbatches = 6, workers = 2 graph <0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3> cost <fwd = [1, 2, 1, 3], bwd = 2> {
}
