#!/usr/bin/env python3
"""The seed's greedy simulator, re-implemented as the reference to beat.

Written from the description in the master-schedule reference sheet ("The
seed's greedy simulator"), not from the seed's code:

    repeat 2*S*B times: among the executed jobs j whose successor is not
    executed, pick j* = argmin max(t(w_compute(succ(j))), t(j)) + eps*n(succ(j)),
    set t(succ(j*)) = duration(succ(j*)) + max(t(worker), t(j*)); latency = max t.

Each microbatch is a chain F(0) .. F(S-1), B(S-1) .. B(0) (the seed's pred:
every job has exactly one successor), so "executed jobs whose successor is
not executed" is the frontier of each chain: one candidate per unfinished
microbatch, and every pick scans them all. That scan is what makes the seed
quadratic (2SB picks times up to B candidates); it is kept on purpose, since
this file is the baseline pipesched's O(J log J) list scheduler is timed
against. eps is infinitesimal here: the key is the pair (start, n), compared
in order, which is what any eps below one tick over max n means.

Python 3 standard library only. Prints one JSON object:
{"latency": ticks, "jobs": 2SB, "seconds": time of the simulation alone}.

    seed_sim.py --strategy lpp --stages 8 --microbatches 64 --workers 64 \
        --groups 8 --ring 8 [--priority fill_drain|backward_first]
"""

import argparse
import json
import sys
import time

FWD_TICKS, BWD_TICKS = 1, 2  # the seed's convention: one unit = 3 ticks


def placement(args):
    """w_compute(s, b) of docs/strategies.md (a backward runs where its forward did)."""
    S, W = args.stages, args.workers
    if args.strategy in ("1f1b", "gpipe"):
        if S % W:
            sys.exit("seed_sim.py: S must be a multiple of W")
        per = S // W
        return lambda s, b: s // per
    if args.strategy == "lpp":
        G, R = args.groups, args.ring
        if G * R != W or S % R:
            sys.exit("seed_sim.py: lpp needs W = G * R and R dividing S")
        return lambda s, b: R * (b % G) + s % R
    sys.exit("seed_sim.py: unknown strategy " + args.strategy)


def priority(name, S, B):
    """n(s, b, d, p) as one integer: the lexicographic keys of docs/strategies.md
    flattened (p < 2S, b < B), so that comparing n compares the keys."""
    def flat(major, b, p):
        return (major * B + b) * 2 * S + p
    if name == "fill_drain":  # ((d + 2) floordiv 3, b, p)
        return lambda d, b, p: flat(d, b, p)
    if name == "backward_first":  # (1 - (d + 2) floordiv 3, b, p)
        return lambda d, b, p: flat(1 - d, b, p)
    if name == "depth_first":  # (b, p)
        return lambda d, b, p: b * 2 * S + p
    if name == "breadth_first":  # (p, b)
        return lambda d, b, p: p * B + b
    sys.exit("seed_sim.py: unknown priority " + name)


def simulate(S, B, W, worker_of, n_of):
    # Chain position p in [0, 2S): a forward of stage p, then the backward of
    # stage 2S-1-p. Per position and microbatch: worker, duration, priority.
    chain = []
    for p in range(2 * S):
        d = 0 if p < S else 1
        s = p if d == 0 else 2 * S - 1 - p
        chain.append((d, s, FWD_TICKS if d == 0 else BWD_TICKS))
    worker = [[worker_of(s, b) for b in range(B)] for (_, s, _) in chain]
    n = [[n_of(d, b, p) for b in range(B)] for p, (d, _, _) in enumerate(chain)]
    dur = [c[2] for c in chain]

    t_worker = [0] * W   # t(worker): when each worker is free
    t_last = [0] * B     # t(j) of each chain's last executed job (0: none yet)
    nxt = [0] * B        # position of each chain's successor
    open_chains = list(range(B))
    latency = 0
    for _ in range(2 * S * B):
        best = None
        for b in open_chains:
            p = nxt[b]
            start = max(t_worker[worker[p][b]], t_last[b])
            key = (start, n[p][b])
            if best is None or key < best[0]:
                best = (key, b)
        (start, _), b = best
        p = nxt[b]
        end = start + dur[p]
        t_worker[worker[p][b]] = end
        t_last[b] = end
        latency = max(latency, end)
        nxt[b] = p + 1
        if p + 1 == 2 * S:
            open_chains.remove(b)
    return latency


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", required=True, choices=["lpp", "1f1b", "gpipe"])
    ap.add_argument("--stages", type=int, required=True)
    ap.add_argument("--microbatches", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--groups", type=int, default=1)
    ap.add_argument("--ring", type=int, default=1)
    ap.add_argument("--priority", choices=["fill_drain", "backward_first", "depth_first",
                                           "breadth_first"],
                    help="default: the strategy's (docs/strategies.md)")
    args = ap.parse_args()
    S, B, W = args.stages, args.microbatches, args.workers
    name = args.priority or ("backward_first" if args.strategy == "1f1b" else "fill_drain")
    t0 = time.perf_counter()
    latency = simulate(S, B, W, placement(args), priority(name, S, B))
    seconds = time.perf_counter() - t0
    print(json.dumps({"latency": latency, "jobs": 2 * S * B, "priority": name,
                      "seconds": round(seconds, 6)}))


if __name__ == "__main__":
    main()
