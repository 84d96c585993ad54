// A hybrid no framework ships: LPP's compute map written out, weights
// sharded over the first ring (s mod 4), backward-first.
sched.step stages = 4, microbatches = 8, workers = 8
    compute affine_map<(s, b, d) -> ((b mod 2) * 4 + s mod 4)>
    weights affine_map<(s, b, d) -> (s mod 4)>
    priority <backward_first> cost <fwd = 1, bwd = 2> {
}
