#!/usr/bin/env python3
"""Prints N seeded random sched.step specs separated by '// -----'."""
import random
import sys

rng = random.Random(20261122)
policies = ["fill_drain", "backward_first", "depth_first", "breadth_first"]
out = []
for _ in range(int(sys.argv[1])):
    S, B, W = rng.randint(1, 5), rng.randint(1, 6), rng.randint(1, 4)
    k1, k2, k3 = (rng.randint(0, 2) for _ in range(3))
    o1, o2 = rng.randint(0, 2), rng.randint(0, 1)
    split = ", bwd_w = 1" if rng.random() < 0.3 else ""
    out.append(
        f"sched.step stages = {S}, microbatches = {B}, workers = {W}\n"
        f"    compute affine_map<(s, b, d) -> ((b * {k1} + s * {k2} + d * {k3}) mod {W})>\n"
        f"    weights affine_map<(s, b, d) -> ((s * {o1} + b * {o2}) mod {W})>\n"
        f"    priority <{rng.choice(policies)}> cost <fwd = 1, bwd = 2{split}, act = 64, weights = 256> {{\n}}\n")
print("// -----\n".join(out))
