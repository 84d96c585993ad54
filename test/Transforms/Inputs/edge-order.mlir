// Stage 1 feeds stages 3 and 2, listed in that order: its backward sums
// their input gradients in edge order (grad(3) + grad(2)), on both sides.
sched.step stages = 4, microbatches = 2, workers = 2
    graph <0 -> 1, 1 -> 3, 1 -> 2, 2 -> 3>
    strategy #sched.gpipe cost <fwd = 1, bwd = 2> {
}
