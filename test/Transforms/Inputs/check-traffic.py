#!/usr/bin/env python3
"""Checks that the lowered programs move exactly the traffic --sched-stats
reports: point-to-point tensor transfers = activations + gradients
received, weight fetches = weight fetches, per worker. Usage:

  check-traffic.py [--jobs] [--caps] [--compile PIPELINE-COMPILE]
                   [--check PIPELINE-RUN] <pipeline-opt> <spec.mlir>...

--pipeline-lower (which proves the rank programs deadlock-free) must succeed,
with the options of the spec's '// lower-options: ...' line if it has one.
--jobs: also every job (forward and backward of every stage and microbatch,
backward_weight exactly when the cost splits the backward) appears exactly
once over all rank programs, and each rank runs as many jobs as the stats
give its worker. --caps: a spec with a memory cap may instead be refused
with the scheduler's "blocked by its memory cap" deadlock (and its stats
too). A spec of interleaved_1f1b whose rounds Megatron-core refuses may be
refused with the note that says so. --compile / --check: pipeline-compile writes the program file and
`pipeline-run --check` (the runtime's loader, validator and deadlock proof)
accepts it for its workers, stages and microbatches (skipped, and said so,
when pipeline-run was not built).

Every spec is checked; each failure prints the spec, its seed line (from
random-schemes.py --named) and the reason; exits 1 if any failed."""
import collections
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

args = sys.argv[1:]
jobs_check = caps = False
compiler = runner = None
while args and args[0].startswith("--"):
    flag = args.pop(0)
    if flag == "--jobs":
        jobs_check = True
    elif flag == "--caps":
        caps = True
    elif flag == "--compile":
        compiler = args.pop(0)
    elif flag == "--check":
        runner = args.pop(0)
    else:
        sys.exit(f"check-traffic.py: unknown option {flag}")
opt, specs = args[0], args[1:]
if runner and not (os.access(runner, os.X_OK) or shutil.which(runner)):
    print(f"pipeline-run --check: skipped ({runner} was not built)")
    runner = None


class Failure(Exception):
    pass


# pipeline-run --check starts MPI as a singleton: without a daemon (Open
# MPI; ignored elsewhere) it starts faster.
singleton = dict(os.environ, OMPI_MCA_ess_singleton_isolated="1")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
layouts = importlib.import_module("check-layouts")


def run(cmd, what, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise Failure(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n"
                      + "\n".join(p.stderr.strip().splitlines()[:6]))
    return p.stdout


def check(spec, tmp):
    text = open(spec).read()
    m = re.search(r"^// lower-options: (.*)$", text, re.M)
    options = m.group(1).strip() if m else ""
    tt = re.search(r"transfer-time=(\d+)", options)
    simulate = f"--sched-simulate=transfer-time={tt.group(1)}" if tt else "--sched-simulate"
    lower = f"--pipeline-lower={options}" if options else "--pipeline-lower"
    p = subprocess.run([opt, spec, lower], capture_output=True, text=True)
    if p.returncode != 0:
        if "cannot be scheduled: deadlock" in p.stderr and \
                "Megatron-core refuses rounds of fewer than W" in p.stderr and \
                "interleaved_1f1b" in text:
            return "refused: interleaved rounds that Megatron-core refuses", "rounds"
        refused = "blocked by its memory cap" in p.stderr and "cannot be scheduled: deadlock" in p.stderr
        if caps and refused and re.search(r"\bcap <(units|bytes)", text):
            s = subprocess.run([opt, spec, "--sched-expand", "--sched-place", simulate,
                                "--sched-stats=json", "-o", "/dev/null"],
                               capture_output=True, text=True)
            if s.returncode == 0 or "blocked by its memory cap" not in s.stderr:
                raise Failure("--pipeline-lower refuses the cap but --sched-stats does not")
            return "refused: its memory cap deadlocks", "cap"
        raise Failure(f"--pipeline-lower failed (exit {p.returncode}): {lower}\n"
                      + "\n".join(p.stderr.strip().splitlines()[:6]))
    lowered = p.stdout
    stats = json.loads(run([opt, spec, "--sched-expand", "--sched-place", simulate,
                            "--sched-stats=json", "-o", "/dev/null"],
                           "--sched-stats"))["steps"][0]
    recv, fetch, ran, rank = {}, {}, {}, None
    jobs = collections.Counter()
    for line in lowered.splitlines():
        m = re.search(r"sched\.rank (\d+)", line)
        if m:
            rank = int(m.group(1))
        recv[rank] = recv.get(rank, 0) + ("sched.recv " in line)
        fetch[rank] = fetch.get(rank, 0) + ("sched.fetch_weights" in line)
        m = re.search(r"sched\.(forward|backward_weight|backward)\((\d+), (\d+)\)", line)
        if m:
            jobs[(m.group(1), int(m.group(2)), int(m.group(3)))] += 1
            ran[rank] = ran.get(rank, 0) + 1
    for w in stats["per_worker"]:
        r = w["worker"]
        want = (w["act_recv"] + w["grad_recv"], w["weight_fetches"])
        got = (recv.get(r, 0), fetch.get(r, 0))
        if want != got:
            raise Failure(f"worker {r}: stats say (transfers, fetches) = "
                          f"{want}, the program has {got}")
    summary = f"{sum(recv.values())} transfers, {sum(fetch.values())} fetches: match"
    if jobs_check:
        S, B = stats["stages"], stats["microbatches"]
        split = re.search(r"\bbwd_w\s*=", text) is not None
        kinds = ["forward", "backward"] + (["backward_weight"] if split else [])
        want = collections.Counter({(k, s, b): 1 for k in kinds for s in range(S) for b in range(B)})
        if jobs != want:
            extra = sorted((jobs - want).items())[:4]
            missing = sorted((want - jobs).elements())[:4]
            raise Failure(f"jobs not exactly once: missing {missing}, repeated or foreign {extra}")
        for w in stats["per_worker"]:
            if ran.get(w["worker"], 0) != w["jobs"]:
                raise Failure(f"rank {w['worker']} runs {ran.get(w['worker'], 0)} jobs, "
                              f"the stats give its worker {w['jobs']}")
        summary += f"; {sum(jobs.values())} jobs, each once"
    if compiler:
        program = os.path.join(tmp, "program.json")
        cmd = [compiler, spec, "-o", program]
        if options:
            cmd.insert(1, f"--lower-options={options}")
        run(cmd, "pipeline-compile")
        # The same program from the rank IR, per rank and in CBOR.
        try:
            layouts.check(compiler, spec, options, tmp, runner)
        except layouts.Failure as e:
            raise Failure(str(e))
        summary += "; layouts equal"
        if runner:
            out = run([runner, "--check", program], "pipeline-run --check", singleton)
            want = (f"OK: {stats['workers']} ranks, {stats['stages']} stages, "
                    f"{stats['microbatches']} microbatches")
            if want not in out:
                raise Failure(f"pipeline-run --check says {out.strip()!r}, expected {want!r}")
            summary += "; pipeline-run --check: OK"
    return summary, "ok"


outcomes = collections.Counter()
with tempfile.TemporaryDirectory() as tmp:
    for spec in specs:
        try:
            summary, outcome = check(spec, tmp)
            outcomes[outcome] += 1
            print(f"{spec}: {summary}")
        except Failure as e:
            outcomes["failed"] += 1
            seed = re.search(r"^// (seed .*)$", open(spec).read(), re.M)
            line = f"FAIL: {spec}" + (f" ({seed.group(1)})" if seed else "") + f": {e}"
            print(line)
            # Also on stderr: lit shows it whole where FileCheck's dump of
            # stdout is cut short.
            print(line, file=sys.stderr)
if len(specs) > 1 or outcomes["failed"]:
    print(f"{len(specs)} specs: {outcomes['ok']} lowered and checked, "
          f"{outcomes['cap']} refused for a memory cap that deadlocks, "
          f"{outcomes['rounds']} for interleaved rounds that cannot run, "
          f"{outcomes['failed']} failed")
sys.exit(1 if outcomes["failed"] else 0)
