#!/usr/bin/env python3
"""Trains seeded random specs under mpirun and compares with the reference.

  train-random.py --mpirun "MPIRUN ARGS" PIPELINE-COMPILE PIPELINE-RUN SPEC...

Each SPEC (from random-schemes.py --named --train) is compiled with
pipeline-compile (its '// lower-options:' line, if any, as --lower-options)
and run on its W ranks with `pipeline-run --verify`, with a model, loss,
optimizer and seed drawn from the spec's seed. The program file predicts
how close the result must be (docs/runtime.md, "what is bitwise equal"):
when every stage's weight-gradient jobs (backward, or backward_weight when
split) run on one rank in microbatch order and no collective reduces the
stage (a tied reduction of more than two stages across ranks counts as
one), the trained weights must be bitwise the reference's; otherwise they
must agree within --verify's default tolerance (normwise relative error
1e-5 per tensor: ulp-level differences of a cross-rank sum stay ~1e-7 with
either loss and optimizer, docs/runtime.md). Losses must agree within the
same tolerance. Prints one line per spec and a
summary; a failure prints the seed, how to replay it, and the run's output.
Exits 1 if any failed."""
import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile

args = sys.argv[1:]
if len(args) < 5 or args[0] != "--mpirun":
    sys.exit(__doc__)
mpirun, compiler, runner, specs = shlex.split(args[1]), args[2], args[3], args[4:]


def bitwise_expected(program):
    """Whether the program sums every stage's weight gradient on one rank in
    microbatch order, with no reduction."""
    gradient_op = "backward_weight" if program["split_backward"] else "backward"
    where = {}  # stage -> [(rank, microbatch)] in program order
    reduced = set()
    for rank in program["ranks"]:
        for op in rank["ops"]:
            if op["op"] == gradient_op:
                where.setdefault(op["stage"], []).append((rank["rank"], op["microbatch"]))
            elif op["op"] in ("allreduce_grad", "reduce_grad"):
                reduced.add(op["stage"])
            elif op["op"] == "tied_grad":
                # A sum across ranks in the reference's order only with two
                # stages on two members (a + b on both), or on one member
                # (its stages in the tie's order).
                tie = program["tied"][op["tie"]]
                if len(op["members"]) > 1 and len(tie) > 2:
                    reduced.update(tie)
    for s in range(program["stages"]):
        jobs = where.get(s, [])
        if s in reduced or len({r for r, _ in jobs}) != 1:
            return False
        if [b for _, b in jobs] != sorted(b for _, b in jobs):
            return False
    return True


def train(spec, tmp):
    text = open(spec).read()
    seed = int(re.search(r"^// seed (\d+)", text, re.M).group(1))
    header = re.search(r"^// (seed .*)$", text, re.M).group(1)
    m = re.search(r"^// lower-options: (.*)$", text, re.M)
    program_file = os.path.join(tmp, f"seed-{seed}.json")
    compile_cmd = [compiler, spec, "-o", program_file]
    if m:
        compile_cmd.insert(1, f"--lower-options={m.group(1).strip()}")
    p = subprocess.run(compile_cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return False, header, f"pipeline-compile failed:\n{p.stderr}", ""
    program = json.load(open(program_file))
    bitwise = bitwise_expected(program)
    rng = random.Random(f"train-{seed}")
    loss = rng.choice(["mse", "ce"])
    options = ["--steps", "2", "--seed", str(rng.randint(1, 1000)),
               "--hidden", str(rng.choice([16, 32])), "--batch", str(rng.choice([2, 4])),
               "--layers-per-stage", str(rng.choice([1, 2])), "--loss", loss,
               "--timeout", "60", "--verify"]
    if rng.random() < 0.3:
        options += ["--optimizer", "adam"]
    shown = " ".join(o for o in options if o not in ("--timeout", "60", "--verify"))
    cmd = mpirun + ["-np", str(program["workers"]), runner, program_file] + options
    replay = " ".join(shlex.quote(c) for c in compile_cmd) + "\n  " + \
        " ".join(shlex.quote(c) for c in cmd)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    problems = []
    if p.returncode != 0:
        problems.append(f"exit {p.returncode}")
    if not re.search(r"^verify: losses of 2 steps vs reference: max relative error \S+: OK$", out, re.M):
        problems.append("the losses differ from the reference's")
    err = re.search(r"^verify: weights vs reference: max normwise relative error (\S+) over "
                    r"\d+ tensors \(.*; tolerance \S+\): OK$", out, re.M)
    if not err:
        problems.append("the weights differ from the reference's")
    if bitwise and not re.search(r"^verify: (\d+) of \1 parameters bitwise equal", out, re.M):
        problems.append("not bitwise equal, as the program's gradient order predicts")
    kind = "bitwise, as predicted" if bitwise else \
        f"max normwise relative error {err.group(1) if err else '?'}"
    summary = f"{header}: {program['workers']} ranks, {shown}: {kind}"
    if problems:
        return False, summary, "; ".join(problems), f"replay:\n  {replay}\n" + out[-3000:]
    return True, summary, "", ""


failed = bitwise_count = 0
with tempfile.TemporaryDirectory() as tmp:
    for spec in specs:
        ok, summary, why, detail = train(spec, tmp)
        if ok:
            bitwise_count += "bitwise" in summary
            print(f"{spec}: {summary}: OK")
        else:
            failed += 1
            report = f"FAIL: {spec}: {summary}: {why}\n{detail}"
            print(report)
            print(report, file=sys.stderr)  # whole in lit's log
print(f"{len(specs)} trained: {len(specs) - failed} equal to the reference "
      f"({bitwise_count} bitwise), {failed} failed")
sys.exit(1 if failed else 0)
