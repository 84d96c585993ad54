// Both workers own a replica of stage 0 (w_weights = b mod 2), and each
// computes the microbatch whose weights map to the other: an owner computes
// with its own replica, it fetches nothing.
sched.step stages = 1, microbatches = 2, workers = 2
    compute affine_map<(s, b, d) -> ((b + 1) mod 2)>
    weights affine_map<(s, b, d) -> (b mod 2)> cost <fwd = 1, bwd = 1> {
}
