// 1F1B on 4 workers, 8 microbatches: the spec that --sched-partition fills
// with the per-stage cost of layers.json (README.md in this directory).
sched.step stages = 4, microbatches = 8, workers = 4 strategy #sched.1f1b {
}
