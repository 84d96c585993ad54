#!/usr/bin/env python3
"""Writes the test programs of runtime/tests/programs/ (program format v1).

Each schedule is given as the compute order of every rank (plus, for FSDP,
its weight transfers and collectives by hand); the generator inserts the
point-to-point transfers a chain needs, groups the transfers that sit between
two compute ops (as Megatron batches them), numbers tags so that the k-th
send of a pair matches the k-th receive, and simulates the programs under
NCCL's rule (a transfer completes once both sides posted it, a group once all
its transfers did) to prove them deadlock-free and to set start/end/makespan.

    gen_programs.py [--out DIR]             all test programs (default: here)
    gen_programs.py --stress N --out FILE   a 1F1B program of about N ops
Python 3 standard library only.
"""
import argparse
import json
import os
import sys

FWD, BWD, BWD_W = "forward", "backward", "backward_weight"
ACT_BYTES, WEIGHT_BYTES = 4096, 65536  # cost-model sizes: checked, not used


def job(kind, s, b):
    return {"op": kind, "stage": s, "microbatch": b}


def fw(s, b): return job(FWD, s, b)
def bw(s, b): return job(BWD, s, b)
def bww(s, b): return job(BWD_W, s, b)
def send(kind, s, b, peer): return {"op": "send", "kind": kind, "stage": s, "microbatch": b, "peer": peer}
def recv(kind, s, b, peer): return {"op": "recv", "kind": kind, "stage": s, "microbatch": b, "peer": peer}
def send_w(s, peer): return {"op": "send_weights", "stage": s, "peer": peer}
def fetch_w(s, peer): return {"op": "fetch_weights", "stage": s, "peer": peer}
def release(s): return {"op": "release_weights", "stage": s}
def allreduce(s, group): return {"op": "allreduce_grad", "stage": s, "group": group}
def reduce(s, root, group): return {"op": "reduce_grad", "stage": s, "root": root, "group": group}
def opt(s): return {"op": "optimizer_step", "stage": s}
def group(*ops): return {"op": "group", "ops": list(ops)}


COMPUTE = (FWD, BWD, BWD_W)
P2P = ("send", "recv", "send_weights", "fetch_weights")


def with_transfers(S, orders, place):
    """Adds the transfers of a chain to per-rank compute orders.

    place(kind, s, b) is the rank running job (kind, s, b). A tensor goes to
    every other rank that reads it, right after it is made; a rank receives
    it right before its first read. Transfers between two compute ops form
    one group."""
    def readers(kind, s, b):
        out = []
        if kind == "act":
            if s + 1 < S:
                out += [(FWD, s + 1, b), (BWD, s + 1, b), (BWD_W, s + 1, b)]
            else:
                out += [(BWD, s, b), (BWD_W, s, b)]
        elif s > 0:
            out += [(BWD, s - 1, b), (BWD_W, s - 1, b)]
        return [j for j in out if place(*j) is not None]

    programs = []
    for r, order in enumerate(orders):
        ops, have, pending = [], set(), []

        def flush():
            if len(pending) == 1:
                ops.append(pending[0])
            elif pending:
                ops.append(group(*pending))
            pending.clear()

        for j in order:
            kind, s, b = j["op"], j["stage"], j["microbatch"]
            needs = []
            if kind == FWD and s > 0:
                needs.append(("act", s - 1, b, place(FWD, s - 1, b)))
            if kind in (BWD, BWD_W):
                if s > 0:
                    needs.append(("act", s - 1, b, place(FWD, s - 1, b)))
                if s + 1 < S:
                    needs.append(("grad", s + 1, b, place(BWD, s + 1, b)))
                else:
                    needs.append(("act", s, b, place(FWD, s, b)))
            for t, ts, tb, src in needs:
                if src != r and (t, ts, tb) not in have:
                    pending.append(recv(t, ts, tb, src))
                    have.add((t, ts, tb))
            flush()
            ops.append(dict(j))
            made = None
            if kind == FWD:
                made = ("act", s, b)
            elif kind == BWD and s > 0:
                made = ("grad", s, b)
            if made:
                have.add(made)
                dests = []
                for rk in readers(*made):
                    d = place(*rk)
                    if d != r and d not in dests:
                        dests.append(d)
                for d in dests:
                    pending.append(send(made[0], made[1], made[2], d))
        flush()
        programs.append(ops)
    return programs


def flat(ops):
    for i, op in enumerate(ops):
        if op["op"] == "group":
            for c in op["ops"]:
                yield i, c
        else:
            yield i, op


def number_tags(programs, workers):
    """Tags in send order; the k-th receive of a pair gets the k-th send's."""
    tag = 0
    outs = {}
    for r, ops in enumerate(programs):
        for _, op in flat(ops):
            if op["op"] in ("send", "send_weights"):
                op["tag"] = tag
                op["bytes"] = ACT_BYTES if op["op"] == "send" else WEIGHT_BYTES
                tag += 1
                outs.setdefault((r, op["peer"]), []).append(op)
    seen = {}
    for r, ops in enumerate(programs):
        for _, op in flat(ops):
            if op["op"] in ("recv", "fetch_weights"):
                pair = (op["peer"], r)
                k = seen.get(pair, 0)
                seen[pair] = k + 1
                sent = outs.get(pair, [])
                if k >= len(sent):
                    raise SystemExit(f"rank {r}: receive {op} has no send")
                other = sent[k]
                for key in ("stage", "microbatch", "kind"):
                    if other.get(key) != op.get(key):
                        raise SystemExit(f"rank {r}: receive {op} meets send {other}")
                op["tag"], op["bytes"] = other["tag"], other["bytes"]


def simulate(programs, cost, allow_deadlock=False):
    """Runs the programs under NCCL's rule; sets start/end; returns makespan."""
    n = len(programs)
    pc, clock = [0] * n, [0] * n
    posted = {}  # (pair, k, side) -> time
    index = {}   # id(op) -> (pair, k, side)
    counts = {}
    for r, ops in enumerate(programs):
        for _, op in flat(ops):
            if op["op"] in P2P:
                out = op["op"] in ("send", "send_weights")
                pair = (r, op["peer"]) if out else (op["peer"], r)
                k = counts.get((pair, out), 0)
                counts[(pair, out)] = k + 1
                index[id(op)] = (pair, k, out)
    coll_posted = {}  # (group, k) -> {rank: time}
    coll_count = {}
    coll_key = {}

    def duration(op):
        s = op["stage"]
        return {FWD: cost["fwd"], BWD: cost["bwd"], BWD_W: cost["bwd_w"]}[op["op"]][s]

    progress = True
    while progress:
        progress = False
        for r, ops in enumerate(programs):
            while pc[r] < len(ops):
                op = ops[pc[r]]
                kind = op["op"]
                if kind in COMPUTE:
                    op["start"] = clock[r]
                    clock[r] += duration(op)
                    op["end"] = clock[r]
                elif kind in P2P or kind == "group":
                    children = op["ops"] if kind == "group" else [op]
                    keys = [index[id(c)] for c in children]
                    for pair, k, out in keys:  # a group posts everything first
                        posted.setdefault((pair, k, out), clock[r])
                    others = [posted.get((pair, k, not out)) for pair, k, out in keys]
                    if None in others:
                        break
                    clock[r] = max([clock[r]] + others)
                elif kind in ("allreduce_grad", "reduce_grad"):
                    g = tuple(op["group"])
                    if id(op) not in coll_key:
                        k = coll_count.get((g, r), 0)
                        coll_count[(g, r)] = k + 1
                        coll_key[id(op)] = (g, k)
                    key = coll_key[id(op)]
                    coll_posted.setdefault(key, {}).setdefault(r, clock[r])
                    if len(coll_posted[key]) < len(g):
                        break
                    clock[r] = max(coll_posted[key].values())
                pc[r] += 1
                progress = True
    stuck = [r for r in range(n) if pc[r] < len(programs[r])]
    if stuck and not allow_deadlock:
        raise SystemExit("deadlock: " + ", ".join(
            f"rank {r} at op {pc[r]} {programs[r][pc[r]]}" for r in stuck))
    for ops in programs:  # jobs a deadlock never reached
        for op in ops:
            if op["op"] in COMPUTE and "start" not in op:
                op["start"] = op["end"] = 0
    return max(clock)


def program(S, B, Wk, owns, programs, split=False, allow_deadlock=False):
    cost = {"fwd": [1] * S, "bwd": [2] * S, "bwd_w": [1 if split else 0] * S,
            "act_bytes": ACT_BYTES, "weight_bytes": WEIGHT_BYTES}
    number_tags(programs, Wk)
    makespan = simulate(programs, cost, allow_deadlock)
    return {
        "format": "pipesched-program", "version": 1,
        "stages": S, "microbatches": B, "workers": Wk,
        "stage_graph": [], "split_backward": split, "cost": cost,
        "makespan": makespan,
        "ranks": [{"rank": r, "owns": owns[r], "ops": programs[r]} for r in range(Wk)],
    }


def owner_steps(S, owns):
    return [[opt(s) for s in owns[r]] for r in range(len(owns))]


def gpipe(S, B):
    """One stage per rank, all forwards then all backwards (fill-drain)."""
    orders = [[fw(s, b) for b in range(B)] + [bw(s, b) for b in range(B)] for s in range(S)]
    progs = with_transfers(S, orders, lambda k, s, b: s)
    owns = [[s] for s in range(S)]
    for r, tail in enumerate(owner_steps(S, owns)):
        progs[r] += tail
    return program(S, B, S, owns, progs)


def gpipe1(S, B):
    """GPipe's fill-drain order with every stage on one rank (W = 1): all
    forwards, then all backwards, microbatch by microbatch. With ddp-1, the
    single-GPU test path of --backend cuda."""
    order = [fw(s, b) for b in range(B) for s in range(S)]
    order += [bw(s, b) for b in range(B) for s in reversed(range(S))]
    progs = with_transfers(S, [order], lambda k, s, b: 0)
    progs[0] += [opt(s) for s in range(S)]
    return program(S, B, 1, [list(range(S))], progs)


def one_f_one_b(S, B, split=False):
    """One stage per rank, Megatron's 1F1B; with split, zero-bubble style:
    each backward_weight right after its backward except the last ones,
    which are deferred to the cool-down."""
    orders = []
    for s in range(S):
        warm = min(S - s - 1, B)
        o = [fw(s, b) for b in range(warm)]
        f, bk = warm, 0
        while f < B:
            o += [fw(s, f), bw(s, bk)]
            f, bk = f + 1, bk + 1
        while bk < B:
            o.append(bw(s, bk))
            bk += 1
        if split:  # backward_weight of b after the backward of b+1
            out, late = [], []
            for j in o:
                out.append(j)
                if j["op"] == BWD:
                    if late:
                        out.append(late.pop())
                    late.append(bww(s, j["microbatch"]))
            o = out + late
        orders.append(o)
    progs = with_transfers(S, orders, lambda k, s, b: s)
    owns = [[s] for s in range(S)]
    for r, tail in enumerate(owner_steps(S, owns)):
        progs[r] += tail
    return program(S, B, S, owns, progs, split=split)


def ddp(S, B, Wk):
    """Every rank owns every stage and runs microbatches b = r, r + W, ...;
    gradients are all-reduced last stage first, as DDP's buckets."""
    everyone = list(range(Wk))
    orders = []
    for r in range(Wk):
        o = []
        for b in range(r, B, Wk):
            o += [fw(s, b) for s in range(S)] + [bw(s, b) for s in reversed(range(S))]
        orders.append(o)
    progs = with_transfers(S, orders, lambda k, s, b: b % Wk)
    owns = [list(range(S)) for _ in range(Wk)]
    for r in range(Wk):
        progs[r] += [allreduce(s, everyone) for s in reversed(range(S))]
        progs[r] += [opt(s) for s in range(S)]
    return program(S, B, Wk, owns, progs)


def interleaved(S, B, Wk):
    """Stage s on rank s % W (several chunks per rank), depth-first."""
    orders = [[] for _ in range(Wk)]
    for b in range(B):
        for s in range(S):
            orders[s % Wk].append(fw(s, b))
        for s in reversed(range(S)):
            orders[s % Wk].append(bw(s, b))
    progs = with_transfers(S, orders, lambda k, s, b: s % Wk)
    owns = [[s for s in range(S) if s % Wk == r] for r in range(Wk)]
    for r, tail in enumerate(owner_steps(S, owns)):
        progs[r] += tail
    return program(S, B, Wk, owns, progs)


def fsdp2():
    """FSDP on 2 ranks, S = 2, B = 2: rank r owns stage r and runs microbatch
    r through both stages with a fetched copy of the other stage's weights,
    released after use; gradients are reduced onto each stage's owner."""
    g = [0, 1]
    r0 = [fw(0, 0), group(send_w(0, 1), fetch_w(1, 1)), fw(1, 0), bw(1, 0), release(1),
          bw(0, 0), send_w(0, 1), reduce(0, 0, g), reduce(1, 1, g), opt(0)]
    r1 = [group(fetch_w(0, 0), send_w(1, 0)), fw(0, 1), release(0), fw(1, 1), bw(1, 1),
          fetch_w(0, 0), bw(0, 1), release(0), reduce(0, 0, g), reduce(1, 1, g), opt(1)]
    return program(2, 2, 2, [[0], [1]], [r0, r1])


def deadlock2():
    """Matches op for op, yet each rank waits for the other first: rank 0
    fetches stage 1's weights before sending its own, and rank 1 the same
    way round. Only the timeout ends it."""
    g = [0, 1]
    r0 = [fetch_w(1, 1), send_w(0, 1), fw(0, 0), fw(1, 0), bw(1, 0), bw(0, 0), release(1),
          reduce(1, 1, g), opt(0)]
    r1 = [fetch_w(0, 0), send_w(1, 0), release(0), reduce(1, 1, g), opt(1)]
    return program(2, 1, 2, [[0], [1]], [r0, r1], allow_deadlock=True)


def ddp1():
    """DDP with a single worker: all jobs on rank 0, all-reduce over [0]."""
    return ddp(2, 2, 1)


PROGRAMS = {
    "ddp-1.json": ddp1,
    "gpipe-2.json": lambda: gpipe(2, 2),
    "gpipe-1.json": lambda: gpipe1(2, 4),
    "ddp-2.json": lambda: ddp(2, 4, 2),
    "fsdp-2.json": fsdp2,
    "zb-2.json": lambda: one_f_one_b(2, 4, split=True),
    "interleaved-2.json": lambda: interleaved(4, 4, 2),
    "1f1b-4.json": lambda: one_f_one_b(4, 8),
    "gpipe-8.json": lambda: gpipe(8, 16),
    "1f1b-8.json": lambda: one_f_one_b(8, 16),
    "ddp-8.json": lambda: ddp(8, 16, 8),
    "deadlock-2.json": deadlock2,
}


def dump(doc):
    """One op per line: readable and diff-friendly."""
    head = {k: v for k, v in doc.items() if k != "ranks"}
    lines = [json.dumps(head)[:-1] + ', "ranks": [']
    for i, rank in enumerate(doc["ranks"]):
        lines.append('  {"rank": %d, "owns": %s, "ops": [' % (rank["rank"], json.dumps(rank["owns"])))
        ops = rank["ops"]
        for k, op in enumerate(ops):
            lines.append("    " + json.dumps(op) + ("," if k + 1 < len(ops) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(doc["ranks"]) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--stress", type=int, help="write one 1F1B program of about N ops to --out")
    args = ap.parse_args()
    if args.stress:
        S = 8
        B = max(1, args.stress // (S * 6))
        with open(args.out, "w") as f:
            f.write(dump(one_f_one_b(S, B)))
        return
    os.makedirs(args.out, exist_ok=True)
    for name, make in PROGRAMS.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.write(dump(make()))


if __name__ == "__main__":
    sys.exit(main())
