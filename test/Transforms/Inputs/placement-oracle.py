#!/usr/bin/env python3
"""Checks every named strategy's placement against an independent oracle:
the definitions as the papers state them, written here apart from
dialects/Sched/SchedStrategies.cpp, on random asymmetric shapes (S != W,
G != R, B not a multiple of W where the strategy allows it, v >= 3).
Usage:

  placement-oracle.py PIPELINE-OPT SEED COUNT

For COUNT shapes drawn from random.Random(SEED), each spec is expanded and
placed (`--sched-expand --sched-place`), and every job's compute and weights
workers must equal the oracle's. Prints one line per shape and a summary;
on a mismatch, the spec, the job and both answers (rerun with the same
SEED to reproduce). Exits 1 on any mismatch or refusal.

The oracles:
- DDP (Rahimi's seed): w = (b mod W, b mod W). FSDP: (b mod W, s mod W).
- GPipe and 1F1B (GPipe paper; Megatron's non-interleaved schedule): S/W
  consecutive stages per worker, w = floor(s / (S/W)).
- Interleaved 1F1B, looped BFS, ZB-H1 with chunks (Megatron's virtual
  pipeline: model chunk c of rank r is stage c*W + r): w = s mod W.
- ZB-H2 (one stage per worker): w = s.
- V shapes (ZB-V, V-Half, V-Min, DualPipeV: stage s and 2W-1-s share a
  worker): w = s for s < W, else 2W-1-s.
- LPP (the seed's h, in its own form): h(s, b) = (R*b mod W) + (s mod R),
  w = (h(s, b), h(s, b)); FSLPP: (h(s, b), h(s, s)), compute first (the
  seed's text; its formula lists the pair the other way round)."""
import random
import re
import subprocess
import sys


def lpp_h(x, y, G, R):
    W = G * R
    return (R * y) % W + x % R


def v_shape(s, W):
    return s if s < W else 2 * W - 1 - s


def draw(rng):
    """One (family, spec attribute, S, B, W, split, oracle) at random."""
    family = rng.choice(["ddp", "fsdp", "gpipe", "1f1b", "interleaved_1f1b",
                         "looped_bfs", "zb_h1", "zb_h2", "zbv", "v_half",
                         "v_min", "dualpipev", "lpp", "fslpp"])
    W = rng.randint(2, 5)
    if family in ("ddp", "fsdp"):
        S = rng.choice([s for s in range(2, 8) if s != W])
        B = W * rng.randint(1, 3)
        weights = (lambda s, b: b % W) if family == "ddp" else (lambda s, b: s % W)
        return family, f"#sched.{family}", S, B, W, False, (lambda s, b: b % W), weights
    if family in ("gpipe", "1f1b"):
        S = W * rng.randint(2, 3)
        B = rng.choice([b for b in range(2, 11) if b % W])
        per = S // W
        f = lambda s, b: s // per
        return family, f"#sched.{family}", S, B, W, False, f, f
    if family in ("interleaved_1f1b", "looped_bfs", "zb_h1"):
        v = rng.randint(3, 4)
        S = v * W
        split = family == "zb_h1"
        if family == "interleaved_1f1b":
            B = rng.choice([b for b in range(W, 3 * W + 1) if b % W]) if rng.random() < 0.5 else W * 2
            attr = f"#sched.interleaved_1f1b<chunks = {v}>"
        elif family == "looped_bfs":
            B = rng.randint(2, 9)
            attr = f"#sched.looped_bfs<chunks = {v}>"
        else:
            B = W * rng.randint(1, 2)
            attr = f"#sched.zb_h1<chunks = {v}>"
        f = lambda s, b: s % W
        return family, attr, S, B, W, split, f, f
    if family == "zb_h2":
        B = rng.randint(2, 9)
        f = lambda s, b: s
        return family, "#sched.zb_h2", W, B, W, True, f, f
    if family in ("zbv", "v_half", "v_min", "dualpipev"):
        B = rng.randint(2 * W, 3 * W) if family == "dualpipev" else rng.randint(2, 9)
        f = lambda s, b: v_shape(s, W)
        return family, f"#sched.{family}", 2 * W, B, W, True, f, f
    # lpp, fslpp: G != R
    G, R = rng.choice([(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2), (1, 4), (4, 1)])
    W = G * R
    S = R * rng.randint(1, 3)
    if S == W:
        S += R
    B = rng.randint(2, 9)
    compute = lambda s, b: lpp_h(s, b, G, R)
    weights = compute if family == "lpp" else (lambda s, b: lpp_h(s, s, G, R))
    return family, f"#sched.{family}<groups = {G}, ring = {R}>", S, B, W, False, compute, weights


JOB = re.compile(r"sched\.(forward|backward_weight|backward)\((\d+), (\d+)\)"
                 r".* on (\d+)(?: weights (\d+))?")


def check(opt, rng):
    family, attr, S, B, W, split, compute, weights = draw(rng)
    cost = "cost <fwd = 1, bwd = 1, bwd_w = 1>" if split else "cost <fwd = 1, bwd = 2>"
    spec = (f"sched.step stages = {S}, microbatches = {B}, workers = {W} "
            f"strategy {attr} {cost} {{}}\n")
    p = subprocess.run([opt, "--sched-expand", "--sched-place"], input=spec,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return False, f"{spec.strip()}: refused: {p.stderr.strip().splitlines()[0]}"
    jobs = 0
    for line in p.stdout.splitlines():
        m = JOB.search(line)
        if not m:
            continue
        kind, s, b, on = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        owner = int(m.group(5)) if m.group(5) else on
        want = (compute(s, b), weights(s, b))
        if (on, owner) != want:
            return False, (f"{spec.strip()}: {kind}({s}, {b}) placed (compute, weights) "
                           f"= {(on, owner)}, the oracle says {want}")
        jobs += 1
    expected = S * B * (3 if split else 2)
    if jobs != expected:
        return False, f"{spec.strip()}: {jobs} jobs placed, expected {expected}"
    return True, f"{family} S={S} B={B} W={W}: {jobs} jobs as the oracle places them"


def main():
    opt, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    failed = 0
    for i in range(count):
        ok, line = check(opt, rng)
        print(("" if ok else "FAIL: ") + line)
        if not ok:
            print(f"FAIL: seed {seed}, shape {i}: {line}", file=sys.stderr)
            failed += 1
    print(f"{count} shapes: {count - failed} placed as the oracle, {failed} failed")
    sys.exit(1 if failed else 0)


main()
