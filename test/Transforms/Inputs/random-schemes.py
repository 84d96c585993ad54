#!/usr/bin/env python3
"""Seeded random sched.step specs.

  random-schemes.py N
      N random affine schemes (compute and weights maps, priority policies,
      split backwards) from one fixed seed, separated by '// -----'.

  random-schemes.py --named [--train] [--tied] [--out DIR] SEED...
      One spec per seed (a seed is N or a range N-M), each drawn from
      random.Random(seed) alone, so that any one can be replayed by itself:
      a named strategy with random parameters that satisfy its constraints
      (docs/strategies.md), or explicit affine compute / weights maps;
      random costs (per-stage lists, split backwards, zero durations,
      overlapped pairs, byte sizes), stage graphs (random DAGs with their
      edges shuffled, `graph <>`), priority overrides (named policies and
      lexicographic keys over (s, b, d[, p])), memory caps (some of which
      deadlock and must be refused) and lowering options. --train keeps
      the shapes small enough to train under mpirun on a small machine
      (W <= 4, S <= 8, B <= 8, no caps). With --out, writes DIR/seed-N.mlir;
      else prints the specs separated by '// -----'. Each spec starts with
      a '// seed N: ...' line; a '// lower-options: ...' line, when there
      is one, gives the options for --pipeline-lower. --tied adds random
      tied stages (`tied <[...], ...>`), drawn from a generator of their
      own so that every other choice of a seed stays what it was.
"""
import os
import random
import sys

POLICIES = ["fill_drain", "backward_first", "depth_first", "breadth_first"]


def custom_maps(rng, W):
    # Backwards and weight halves (d = 1, 2) on other workers than their
    # forwards; weights on one worker per stage, or replicated by microbatch.
    k1, k2, k3 = (rng.randint(0, 2) for _ in range(3))
    o1, o2 = rng.randint(0, 2), rng.randint(0, 1)
    return (f"    compute affine_map<(s, b, d) -> ((b * {k1} + s * {k2} + d * {k3}) mod {W})>\n"
            f"    weights affine_map<(s, b, d) -> ((s * {o1} + b * {o2}) mod {W})>\n")


def affine_schemes(n):
    rng = random.Random(20261122)
    out = []
    for _ in range(n):
        S, B, W = rng.randint(1, 5), rng.randint(1, 6), rng.randint(1, 4)
        maps = custom_maps(rng, W)
        split = ", bwd_w = 1" if rng.random() < 0.3 else ""
        out.append(
            f"sched.step stages = {S}, microbatches = {B}, workers = {W}\n{maps}"
            f"    priority <{rng.choice(POLICIES)}> cost <fwd = 1, bwd = 2{split}, act = 64, weights = 256> {{\n}}\n")
    return out


def torch_rounds(B, W):
    return max(1, B // W)


# Strategies whose default priority is a static order: no priority override,
# no cap (static orders ignore caps), and the order needs their placement.
STATIC = {"interleaved_1f1b", "looped_bfs", "zb_h1", "zb_h2", "zbv", "v_min",
          "v_half", "dualpipev"}
SPLIT_REQUIRED = {"zb_h1", "zb_h2", "zbv", "v_min", "v_half", "dualpipev"}
STRATEGIES = ["ddp", "fsdp", "gpipe", "1f1b", "interleaved_1f1b", "looped_bfs",
              "zb_h1", "zb_h2", "zbv", "v_min", "v_half", "dualpipev", "lpp",
              "fslpp", "custom"]


def shape(rng, name, train):
    """(S, B, W, strategy attribute or None) satisfying the strategy's
    constraints."""
    maxW = 4 if train else 6
    maxS = 8 if train else 12
    maxB = 8 if train else 10
    # Training on one rank checks little: mostly two or more.
    W = rng.randint(2 if train and rng.random() < 0.85 else 1, maxW)
    if name in ("ddp", "fsdp"):
        S = rng.randint(1, 5 if train else 6)
        B = W * rng.randint(1, max(1, maxB // W))
        return S, B, W, f"#sched.{name}"
    if name in ("gpipe", "1f1b"):
        S = W * rng.randint(1, max(1, maxS // W))
        return S, rng.randint(1, maxB), W, f"#sched.{name}"
    if name in ("interleaved_1f1b", "looped_bfs", "zb_h1"):
        v = rng.randint(1, max(1, min(3, maxS // W)))
        S, B = v * W, rng.randint(1, maxB)
        if name == "looped_bfs":
            return S, B, W, f"#sched.looped_bfs<chunks = {v}>"
        if name == "zb_h1":
            while B % torch_rounds(B, W):
                B -= 1
            return S, B, W, ("#sched.zb_h1" if v == 1 and rng.random() < 0.5
                             else f"#sched.zb_h1<chunks = {v}>")
        group = rng.choice(["", "megatron", "torch", "N"])
        if group == "torch" and B % torch_rounds(B, W):
            group = ""
        if group == "N":
            group = str(rng.randint(1, B))
        # Rounds that Megatron-core refuses (fewer than W microbatches, or a
        # short last round of fewer than W) may not be executable: refused
        # with a note (checked by the compile cases); training needs a
        # program, so there torch's rounds or a B that fits instead.
        g = W if group in ("", "megatron") else (int(group) if group != "torch" else 0)
        if train and v > 1 and g and (g < W or 0 < B % g < W):
            if B % torch_rounds(B, W) == 0:
                group = "torch"
            else:
                B, group = W * max(1, B // W), ""
        extra = f", group = {group}" if group else ""
        return S, B, W, f"#sched.interleaved_1f1b<chunks = {v}{extra}>"
    if name == "zb_h2":
        return W, rng.randint(1, maxB), W, "#sched.zb_h2"
    if name in ("zbv", "v_min", "v_half", "dualpipev"):
        W = min(W, maxS // 2)
        B = rng.randint(2 * W if name == "dualpipev" else 1, max(maxB, 2 * W))
        return 2 * W, B, W, f"#sched.{name}"
    if name in ("lpp", "fslpp"):
        divisors = [(g, W // g) for g in range(1, W + 1) if W % g == 0]
        G, R = rng.choice(divisors)
        S = R * rng.randint(1, max(1, maxS // R // 2))
        return S, rng.randint(1, maxB), W, f"#sched.{name}<groups = {G}, ring = {R}>"
    # custom: explicit affine maps, no strategy.
    return rng.randint(1, 5), rng.randint(1, 6), W, None


def priority_key(rng):
    g = rng.randint(1, 4)
    return rng.choice([
        f"affine_map<(s, b, d) -> (b floordiv {g}, d, s)>",
        "affine_map<(s, b, d, p) -> (d, b, p)>",
        "affine_map<(s, b, d, p) -> (p, b)>",
        f"affine_map<(s, b, d, p) -> (b * {rng.randint(0, 3)} + p * {rng.randint(1, 3)}, d)>",
        "affine_map<(s, b, d, p) -> (-b, p)>",
        f"affine_map<(s, b, d, p) -> ((b + s) mod {g}, p floordiv 2, b)>",
    ])


def stage_graph(rng, S):
    """'' (the chain), 'graph <>' (independent stages) or a random DAG with
    src < dst, its edges in random order."""
    r = rng.random()
    if r < 0.5 or S == 1:
        return ""
    if r < 0.6:
        return "graph <>"
    p = rng.uniform(0.2, 0.7)
    edges = [(i, j) for j in range(S) for i in range(j) if rng.random() < p]
    rng.shuffle(edges)
    return "graph <" + ", ".join(f"{i} -> {j}" for i, j in edges) + ">"


def cost(rng, name, S):
    def value(lo, hi):
        if rng.random() < 0.25:
            return "[" + ", ".join(str(rng.randint(lo, hi)) for _ in range(S)) + "]"
        return str(rng.randint(lo, hi))

    zero = rng.random() < 0.15
    fields = ["fwd = 0", "bwd = 0"] if zero else [f"fwd = {value(0, 3)}", f"bwd = {value(0, 4)}"]
    if name in SPLIT_REQUIRED or rng.random() < 0.3:
        fields.append("bwd_w = 0" if zero else f"bwd_w = {value(0, 2)}")
    if name == "dualpipev" and rng.random() < 0.5:
        fields.append(f"fwd_bwd = {rng.randint(0, 6)}")
    act = rng.choice([None, 0, 64, 4096])
    if act is not None:
        fields.append(f"act = {act}")
    if rng.random() < 0.5:
        fields.append(f"weights = {rng.choice([0, 256, 65536])}")
    return "cost <" + ", ".join(fields) + ">", act


def tied_groups(seed, S):
    """'' or a `tied <...>` of one or two disjoint groups of at least two
    stages each, from random.Random(seed) apart from the spec's generator."""
    rng = random.Random(f"tied-{seed}")
    if S < 2 or rng.random() < 0.2:
        return ""
    stages = list(range(S))
    rng.shuffle(stages)
    groups = []
    while len(stages) >= 2 and len(groups) < 2:
        size = rng.randint(2, min(3, len(stages)))
        groups.append(stages[:size])
        stages = stages[size:]
        if rng.random() < 0.5:
            break
    return "tied <" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + ">"


def named_scheme(seed, train, tied=False):
    rng = random.Random(seed)
    name = rng.choice(STRATEGIES)
    S, B, W, strategy = shape(rng, name, train)
    graph = stage_graph(rng, S)
    cost_attr, act = cost(rng, name, S)
    lines = [f"sched.step stages = {S}, microbatches = {B}, workers = {W}"]
    if graph:
        lines.append(f"    {graph}")
    if strategy:
        lines.append(f"    strategy {strategy}")
    if tied and tied_groups(seed, S):
        lines.append(f"    {tied_groups(seed, S)}")
    if name == "custom" or (strategy and name not in STATIC and rng.random() < 0.15):
        lines.append(custom_maps(rng, W).rstrip("\n"))
    priority = ""
    if name not in STATIC and (name == "custom" or rng.random() < 0.4):
        priority = (f"<{rng.choice(POLICIES)}>" if rng.random() < 0.5
                    else priority_key(rng))
    cap = ""
    if not train and name not in STATIC and rng.random() < 0.25:
        cap = rng.choice([
            "cap <none>",
            f"cap <units = {rng.randint(1, S + 1)}>",
            "cap <units = [" + ", ".join(str(rng.randint(1, S + 1)) for _ in range(W)) + "]>",
        ] + ([f"cap <bytes = {act * rng.randint(1, S + 1)}>"] if act else []))
    tail = " ".join(x for x in (f"priority {priority}" if priority else "", cap, cost_attr) if x)
    lines.append(f"    {tail} {{\n}}")
    options = []
    if rng.random() < 0.3:
        options.append(f"transfer-time={rng.randint(0, 2)}")
    if rng.random() < 0.3:
        options.append(f"prefetch-depth={rng.randint(0, 3)}")
    header = f"// seed {seed}: {name}, S = {S}, B = {B}, W = {W} (random-schemes.py --named{' --train' if train else ''}{' --tied' if tied else ''} {seed})\n"
    if options:
        header += f"// lower-options: {' '.join(options)}\n"
    return header + "\n".join(lines) + "\n"


def seeds(args):
    for arg in args:
        lo, _, hi = arg.partition("-")
        yield from range(int(lo), int(hi or lo) + 1)


def main(argv):
    if not argv or argv[0] != "--named":
        print("// -----\n".join(affine_schemes(int(argv[0]))))
        return
    argv = argv[1:]
    train = "--train" in argv
    tied = "--tied" in argv
    argv = [a for a in argv if a not in ("--train", "--tied")]
    out = None
    if argv[:1] == ["--out"]:
        out, argv = argv[1], argv[2:]
        os.makedirs(out, exist_ok=True)
    specs = []
    for seed in seeds(argv):
        spec = named_scheme(seed, train, tied)
        if out:
            with open(os.path.join(out, f"seed-{seed}.mlir"), "w") as f:
                f.write(spec)
        else:
            specs.append(spec)
    if not out:
        print("// -----\n".join(specs))


if __name__ == "__main__":
    main(sys.argv[1:])
