#!/usr/bin/env python3
"""Checks --sched-search on a grid of steps against every named strategy.

For each configuration (S, B, W, costs, memory limit) of the grid:
  1. `pipeline-opt --sched-search` finds the best spec (JSON report, spec);
  2. the spec goes through the ordinary passes (expand, place, simulate,
     stats): its latency must equal the reported one and its peak live
     activations must fit the limit;
  3. every named strategy with its own priority that verifies for the
     shape goes through the same passes; the search's latency must not
     exceed any of them that fits the limit;
  4. the lower bound must not exceed any latency within the limit.
Prints one line per configuration and a summary; `--markdown` prints the
table of docs/search.md instead. Exits 1 on the first violation.

With `--exact`, instead: tiny steps where the exact solver (every
schedule, any job on any worker) proves the optimum, against the bound and
the search.

With `--tight`, instead: steps under tight memory limits, the search
without and with the memory-aware list scheduler, against a proven
optimum where the exact solver proves one, else the lower bound.

usage: search-grid.py PIPELINE_OPT [--markdown] [--count N] [--exact | --tight]
"""
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# (S, B, W): pipelines, interleaving (S = vW), V shapes (S = 2W), data
# parallel (B a multiple of W), and shapes only LPP's groups fit.
SHAPES = [(2, 4, 2), (4, 8, 4), (4, 8, 2), (4, 16, 4), (8, 8, 4),
          (8, 16, 4), (6, 12, 3), (4, 4, 4), (8, 16, 8), (4, 12, 2)]
# (fwd, bwd, bwd_w or None): the seed's 1:2, zero bubble's 1:1:1, a heavy
# backward with a light weight half, and 1:3.
COSTS = [(1, 2, None), (1, 1, 1), (2, 3, 1), (1, 3, None)]


# Bytes of one activation and of one stage's weights, for the limits in
# bytes: a stage's weights weigh as much as four activations.
ACT, WEIGHTS = 1000, 4000


def limits(S, W):
    """No limit; 1F1B's activations (S on the first worker) and half of
    them; and in bytes, one pipeline stage's share of the weights (S/W
    stages) plus 1F1B's activations: replicated (DDP) or sharded and
    fetched (FSDP) weights do not fit."""
    return [None, S, max(1, S // 2), ("bytes", S // W * WEIGHTS + S * ACT)]


def grid():
    configs = []
    for k, (S, B, W) in enumerate(SHAPES):
        for cost in (COSTS[k % 4], COSTS[(k + 1) % 4]):
            for limit in limits(S, W):
                configs.append((S, B, W, cost, limit))
    return configs


def cost_text(cost, sizes=False):
    f, b, w = cost
    extra = f", act = {ACT}, weights = {WEIGHTS}" if sizes else ""
    return (f"cost <fwd = {f}, bwd = {b}" + (f", bwd_w = {w}" if w else "") +
            extra + ">")


def held_bytes(stats):
    """The fullest worker's bytes as the search counts them: live
    activations, the weights it owns, and two fetched stages if it fetches."""
    return max(w["peak_live_bytes"] + w["weights_owned"] * WEIGHTS +
               (2 * WEIGHTS if w["weight_fetches"] else 0)
               for w in stats["per_worker"])


def named(S, B, W):
    out = ["#sched.ddp", "#sched.fsdp", "#sched.gpipe", "#sched.1f1b",
           "#sched.zb_h2", "#sched.zbv", "#sched.v_half", "#sched.v_min",
           "#sched.dualpipev"]
    if S % W == 0:
        v = S // W
        out.append(f"#sched.zb_h1<chunks = {v}>")
        if v >= 2:
            out += [f"#sched.interleaved_1f1b<chunks = {v}>",
                    f"#sched.interleaved_1f1b<chunks = {v}, group = torch>",
                    f"#sched.looped_bfs<chunks = {v}>"]
    for ring in range(1, W + 1):
        if W % ring == 0 and S % ring == 0:
            out += [f"#sched.lpp<groups = {W // ring}, ring = {ring}>",
                    f"#sched.fslpp<groups = {W // ring}, ring = {ring}>"]
    return out


def run(cmd, stdin=None, check=True):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return p


def first_json(text):
    """The JSON document that opens `text` (stats print before the IR) and
    the text after it, or None."""
    i = text.find("{")
    if i < 0:
        return None
    doc, end = json.JSONDecoder().raw_decode(text, i)
    return doc, text[end:]


def simulate(opt, path, split=False):
    """[(strategy text, stats step)] of every step that verifies."""
    cmd = [opt, "--sched-expand", "--sched-place", "--sched-simulate",
           "--sched-stats=json", str(path)]
    if split:
        cmd.insert(1, "--split-input-file")
    out = run(cmd, check=not split).stdout
    results = []
    for chunk in out.split("// -----"):
        if not chunk.strip():
            continue
        stats, rest = first_json(chunk)
        m = re.search(r"strategy (#sched(?:<[^>]*>|\.\w+(?:<[^>]*>)?))", rest)
        results.append((m.group(1) if m else "", stats["steps"][0]))
    return results


def best_found(report):
    """What the step became: the best candidate, or the schedule placed job
    by job when it beat them."""
    placed = report.get("job_by_job")
    if not placed or not placed["chosen"]:
        return report["ranking"][0]
    bound = report["bound"]["value"]
    return {"latency": placed["latency"], "peak_live": placed["peak_live"],
            "gap": (placed["latency"] - bound) / bound,
            "schedule": f"job by job ({placed['by']})"}


def check_config(opt, tmp, config):
    S, B, W, cost, limit = config
    in_bytes = isinstance(limit, tuple)
    spec = tmp / "spec.mlir"
    spec.write_text(f"sched.step stages = {S}, microbatches = {B}, "
                    f"workers = {W} {cost_text(cost, in_bytes)} {{\n}}\n")
    option = "format=json"
    if in_bytes:
        option += f" memory-limit-bytes={limit[1]}"
    elif limit:
        option += f" memory-limit={limit}"

    def over(st):
        if in_bytes:
            return held_bytes(st) > limit[1]
        return bool(limit) and st["peak_live"] > limit
    best = tmp / "best.mlir"
    report = json.loads(run([opt, f"--sched-search={option}", str(spec),
                             "-o", str(best)]).stdout)["steps"][0]
    found = best_found(report)
    bound = report["bound"]["value"]

    [(_, stats)] = simulate(opt, best)
    if stats["latency"] != found["latency"] or stats["peak_live"] != found["peak_live"]:
        sys.exit(f"{config}: the searched spec simulates to {stats['latency']} "
                 f"(peak {stats['peak_live']}), the search said "
                 f"{found['latency']} (peak {found['peak_live']})")
    if over(stats):
        sys.exit(f"{config}: the searched spec is over the limit")

    specs = tmp / "named.mlir"
    specs.write_text("\n// -----\n".join(
        f"sched.step stages = {S}, microbatches = {B}, workers = {W} "
        f"strategy {name} {cost_text(cost, in_bytes)} {{\n}}\n"
        for name in named(S, B, W)))
    best_named = None
    fitting = 0
    for name, st in simulate(opt, specs, split=True):
        if over(st):
            continue
        if st["latency"] < bound:
            sys.exit(f"{config}: {name} takes {st['latency']} within the "
                     f"limit, below the bound {bound}")
        fitting += 1
        if st["latency"] < found["latency"]:
            sys.exit(f"{config}: {name} takes {st['latency']} within the "
                     f"limit, the search returned {found['latency']}")
        if best_named is None or st["latency"] < best_named[1]:
            best_named = (name, st["latency"])
    return report, found, best_named, fitting


# Tiny steps (S, B, W, cost, limit in activations) for the exact solver.
TINY = [(2, 2, 2, (1, 2, None), None), (2, 2, 2, (1, 2, None), 1),
        (2, 3, 2, (1, 2, None), None), (2, 3, 2, (1, 2, None), 2),
        (2, 4, 2, (1, 2, None), 1), (2, 4, 2, (1, 2, None), 2),
        (3, 2, 3, (1, 2, None), None), (3, 3, 3, (1, 2, None), 2),
        (4, 2, 2, (1, 2, None), 2), (4, 2, 4, (1, 2, None), 2),
        (2, 2, 2, (1, 1, 1), 1), (2, 3, 2, (1, 1, 1), 2),
        (3, 2, 3, (1, 1, 1), 2)]


def tiny_search(opt, spec, config, extra):
    S, B, W, cost, limit = config
    spec.write_text(f"sched.step stages = {S}, microbatches = {B}, "
                    f"workers = {W} {cost_text(cost)} {{\n}}\n")
    option = f"format=json top=1 {extra}" + (
        f" memory-limit={limit}" if limit else "")
    return json.loads(run([opt, f"--sched-search={option}", str(spec),
                           "-o", "/dev/null"]).stdout)["steps"][0]


def exact_table(opt, markdown):
    """The candidates alone, the search without `exact` (the list scheduler
    placing job by job under a limit) and with it, against the optimum."""
    ratios, optimal = [], 0
    if markdown:
        print("| S | B | W | fwd/bwd[/bwd_w] | limit | bound | candidates | "
              "search | search / optimum | exact optimum | with exact | nodes |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "spec.mlir"
        for config in TINY:
            S, B, W, cost, limit = config
            plain = tiny_search(opt, spec, config, "")
            r = tiny_search(opt, spec, config, "exact")
            bound, exact = r["bound"]["value"], r["exact"]
            candidates = r["ranking"][0]["latency"]
            found, final = plain["best_latency"], r["best_latency"]
            if (not exact["proven"] or final != exact["makespan"] or
                    not bound <= exact["makespan"] <= min(found, candidates)):
                sys.exit(f"{config}: bound {bound}, exact {exact}, search "
                         f"{found}, with exact {final}")
            ratios.append(found / exact["makespan"])
            optimal += found == exact["makespan"]
            ratio = "/".join(str(c) for c in cost if c)
            row = (S, B, W, ratio, limit or "-", bound, candidates, found,
                   f"{found / exact['makespan']:.3f}", exact["makespan"],
                   final, exact["nodes"])
            if markdown:
                print("| " + " | ".join(str(x) for x in row) + " |")
            else:
                print(f"S={S} B={B} W={W} cost={ratio} limit={limit or '-'}: "
                      f"bound {bound}, search {found}, exact {exact['makespan']}")
    print(f"{len(TINY)} tiny steps: search / optimum median "
          f"{statistics.median(ratios):.3f}, worst {max(ratios):.3f}, optimal "
          f"in {optimal}; with exact, optimal in {len(TINY)}")
    random_tiny(opt, 40)


def random_tiny(opt, count):
    """Random tiny steps: with `exact`, what the step becomes is the proven
    optimum whenever the solver proves one."""
    rng = random.Random(30)
    proven = 0
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "spec.mlir"
        for _ in range(count):
            S, B, W = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
            cost = (rng.randint(1, 2), rng.randint(1, 3),
                    rng.choice([None, 1]))
            limit = rng.choice([None, -(-S // W), -(-S // W) + 1])
            r = tiny_search(opt, spec, (S, B, W, cost, limit),
                            "exact exact-nodes=2000000")
            exact = r["exact"]
            if not exact["proven"]:
                continue
            proven += 1
            if r["best_latency"] != exact["makespan"]:
                sys.exit(f"{(S, B, W, cost, limit)}: the search gives "
                         f"{r['best_latency']}, the proven optimum is "
                         f"{exact['makespan']}")
    print(f"{count} random tiny steps: the search with exact gives the "
          f"proven optimum in all {proven} proven")


def tight_configs():
    """Tight limits: the least that holds a microbatch's S activations over
    the W workers, and one more; shapes small enough for the exact solver
    (at most 40 jobs) and a few past it."""
    configs = []
    for S, W in [(2, 2), (3, 2), (3, 3), (4, 2), (4, 4), (4, 3), (6, 3),
                 (8, 4)]:
        for B in (2, 3, 4, 6, 8):
            for cost in ((1, 2, None), (1, 1, 1)):
                least = -(-S // W)
                for limit in (least, least + 1):
                    per = 3 if cost[2] else 2
                    if S * B * per <= 40 or (B == 8 and cost[2] is None):
                        configs.append((S, B, W, cost, limit))
    return configs


def search_tight(opt, spec, config, extra):
    S, B, W, cost, limit = config
    spec.write_text(f"sched.step stages = {S}, microbatches = {B}, "
                    f"workers = {W} {cost_text(cost)} {{\n}}\n")
    option = f"format=json top=1 memory-limit={limit} {extra}"
    p = run([opt, f"--sched-search={option}", str(spec), "-o", "/dev/null"],
            check=False)
    if p.returncode != 0:
        if "has no schedule within the memory limit" not in p.stderr:
            sys.exit(f"{config}: {p.stderr}")
        return None
    return json.loads(p.stdout)["steps"][0]


def tight_table(opt, markdown):
    """Before (the candidates alone, list-search=0) and after (with the
    memory-aware list scheduler), against a proven optimum where the exact
    solver proves one, else the lower bound."""
    rows, close = [], {"before": 0, "after": 0}
    with tempfile.TemporaryDirectory() as d:
        spec = Path(d) / "spec.mlir"
        for config in tight_configs():
            S, B, W, cost, limit = config
            before = search_tight(opt, spec, config, "list-search=0")
            after = search_tight(opt, spec, config, "")
            if after is None:
                sys.exit(f"{config}: no schedule found")
            reference, proven = after["bound"]["value"], False
            if S * B * (3 if cost[2] else 2) <= 40:
                exact = search_tight(opt, spec, config,
                                     "exact exact-nodes=2000000")["exact"]
                if exact["proven"] and exact["makespan"] <= after["best_latency"]:
                    reference, proven = exact["makespan"], True
            b = before["best_latency"] if before else None
            a = after["best_latency"]
            if (b is not None and (a > b or b < reference)) or a < reference:
                sys.exit(f"{config}: before {b}, after {a}, reference {reference}")
            close["before"] += b is not None and b <= 1.05 * reference
            close["after"] += a <= 1.05 * reference
            ratio = "/".join(str(c) for c in cost if c)
            rows.append((S, B, W, ratio, limit, reference,
                         "optimum" if proven else "bound",
                         "none fits" if b is None else b, a,
                         f"{a / reference:.3f}"))
    if markdown:
        print("| S | B | W | fwd/bwd[/bwd_w] | limit | reference | is | "
              "before | after | after / reference |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(str(x) for x in r) + " |")
        print()
    print(f"{len(rows)} tight steps: within 5% of the reference before "
          f"{close['before']}, after {close['after']}; proven optima "
          f"{sum(1 for r in rows if r[6] == 'optimum')}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    opt, markdown = args[0], "--markdown" in args
    if "--exact" in args:
        return exact_table(opt, markdown)
    if "--tight" in args:
        return tight_table(opt, markdown)
    configs = grid()
    if "--count" in args:
        configs = configs[: int(args[args.index("--count") + 1])]
    gaps, gains = [], []
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for config in configs:
            S, B, W, cost, limit = config
            report, found, best_named, fitting = check_config(opt, tmp, config)
            bound = report["bound"]
            gap = found["gap"]
            gaps.append(gap)
            named_text = (f"{best_named[0]} {best_named[1]}" if best_named
                          else "none fits")
            if best_named:
                gains.append(best_named[1] / found["latency"])
            ratio = "/".join(str(c) for c in cost if c)
            shown = (f"{limit[1]} B" if isinstance(limit, tuple)
                     else limit or "-")
            rows.append((S, B, W, ratio, shown, bound["value"],
                         bound["binding"], found["latency"], f"{100 * gap:.1f}%",
                         named_text, found["schedule"]))
            if not markdown:
                print(f"S={S} B={B} W={W} cost={ratio} limit={shown}: "
                      f"bound {bound['value']} ({bound['binding']}), search "
                      f"{found['latency']}, best named {named_text}, "
                      f"{fitting} named fit: ok")
    summary = (f"{len(configs)} configurations: gap to the bound median "
               f"{100 * statistics.median(gaps):.1f}%, worst "
               f"{100 * max(gaps):.1f}%, zero in "
               f"{sum(1 for g in gaps if g == 0)}; best named / search "
               f"latency median {statistics.median(gains):.3f}, "
               f"max {max(gains):.3f}")
    if markdown:
        print("| S | B | W | fwd/bwd[/bwd_w] | limit | bound | binds | search "
              "| gap | best named | schedule found |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(str(x) for x in r[:-1]) +
                  f" | `{r[-1]}` |")
        print()
    print(summary)


if __name__ == "__main__":
    main()
