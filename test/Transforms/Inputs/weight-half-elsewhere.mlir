// Forwards and backwards on worker 0, every weight half (d = 2) on worker 1:
// each re-reads its backward's inputs, which must travel to worker 1.
sched.step stages = 2, microbatches = 2, workers = 2
    compute affine_map<(s, b, d) -> (d floordiv 2)>
    weights affine_map<(s, b, d) -> (0)> cost <fwd = 1, bwd = 1, bwd_w = 1> {
}
