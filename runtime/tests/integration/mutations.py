#!/usr/bin/env python3
"""Property test of program mutations (mutations.test): a run refuses
everything `pipeline-run --check` refuses, and never crashes or hangs.

  mutations.py --run PIPELINE-RUN --mpirun "MPIRUN ARGS" --split SPLIT.py
               [--seed N] [--mutants N] [--options N] WORKDIR PROGRAM.json...

Takes valid programs, applies one random mutation that keeps the JSON
valid (swap two ops of a rank, drop one, change a collective's members,
a tag, a size, a reduce's root or a collective's kind), writes the mutant
as a single document or in the per-rank layout, and runs both
`pipeline-run --check` and `mpirun -np W pipeline-run` (each under a
timeout). Asserts:
  - no crash (a signal, a sanitizer's or libc's abort) and no hang;
  - a mutant --check refuses, the run refuses too: non-zero status, a
    message naming the program, no peer timing out;
  - a mutant --check accepts, the run trains or refuses cleanly (a
    message naming the program or pipeline-run's, no timeout).
Then --options launches give one rank a different value of a random
model option: refused at start, status 2, naming the option.

The seed (random unless given) is printed first and with every failure,
with the command that replays it. Python 3 standard library only."""
import argparse
import copy
import json
import os
import random
import shlex
import subprocess
import sys
import time

CRASH = ("Segmentation fault", "Aborted", "AddressSanitizer", "core dumped",
         "terminate called", "malloc():", "free():", "double free", "exited on signal")
COLLECTIVES = ("allreduce_grad", "reduce_grad", "tied_grad")
TRANSFERS = ("send", "recv", "send_weights", "fetch_weights")


def transfers(rank):
    """Every transfer of a rank, group children included."""
    for op in rank["ops"]:
        if op["op"] == "group":
            yield from op["ops"]
        elif op["op"] in TRANSFERS:
            yield op


def collectives(doc):
    return [(r, op) for r in doc["ranks"] for op in r["ops"] if op["op"] in COLLECTIVES]


# Each mutation edits `doc` in place and says what it did, or returns None
# when the program has nothing it applies to.
def swap_ops(doc, rng):
    rank = rng.choice(doc["ranks"])
    ops = rank["ops"]
    if len(ops) < 2:
        return None
    i = rng.randrange(len(ops) - 1)
    j = i + 1 if rng.random() < 0.6 else rng.randrange(len(ops))
    ops[i], ops[j] = ops[j], ops[i]
    return f"rank {rank['rank']}: ops {i} and {j} swapped"


def drop_op(doc, rng):
    rank = rng.choice(doc["ranks"])
    if not rank["ops"]:
        return None
    i = rng.randrange(len(rank["ops"]))
    del rank["ops"][i]
    return f"rank {rank['rank']}: op {i} dropped"


def change_members(doc, rng):
    found = collectives(doc)
    if not found:
        return None
    rank, op = rng.choice(found)
    workers = doc["workers"]
    choices = [[rank["rank"]], sorted(set(op["members"]) - {rng.choice(op["members"])}),
               sorted(set(op["members"]) | {rng.randrange(workers)}), list(range(workers))]
    before = op["members"]
    op["members"] = rng.choice([c for c in choices if c] or [[rank["rank"]]])
    return f"rank {rank['rank']}: {op['op']} members {before} -> {op['members']}"


def change_tag(doc, rng):
    found = [(r, op) for r in doc["ranks"] for op in transfers(r)]
    if not found:
        return None
    rank, op = rng.choice(found)
    before, op["tag"] = op["tag"], rng.choice([0, 1, op["tag"] + 1, rng.randrange(64)])
    return f"rank {rank['rank']}: {op['op']} tag {before} -> {op['tag']}"


def change_size(doc, rng):
    found = [(r, op) for r in doc["ranks"] for op in transfers(r)] + collectives(doc)
    if not found:
        return None
    rank, op = rng.choice(found)
    before, op["bytes"] = op["bytes"], rng.choice([0, 1, op["bytes"] * 2])
    return f"rank {rank['rank']}: {op['op']} bytes {before} -> {op['bytes']}"


def change_root(doc, rng):
    found = collectives(doc)
    if not found:
        return None
    rank, op = rng.choice(found)
    if op["op"] == "reduce_grad" and rng.random() < 0.5:
        before, op["root"] = op["root"], rng.randrange(doc["workers"])
        return f"rank {rank['rank']}: reduce_grad root {before} -> {op['root']}"
    if op["op"] == "reduce_grad":
        op["op"] = "allreduce_grad"
        del op["root"]
        return f"rank {rank['rank']}: reduce_grad -> allreduce_grad"
    if op["op"] == "allreduce_grad":
        op["op"], op["root"] = "reduce_grad", rng.choice(op["members"])
        return f"rank {rank['rank']}: allreduce_grad -> reduce_grad onto {op['root']}"
    return None


MUTATIONS = [swap_ops, swap_ops, drop_op, change_members, change_tag, change_size,
             change_root]


def mutate(doc, rng):
    for _ in range(100):
        mutant = copy.deepcopy(doc)
        what = rng.choice(MUTATIONS)(mutant, rng)
        if what and mutant != doc:
            return mutant, what
    return None, None


def run(cmd, timeout):
    """(status, output); status None on a timeout (the process group killed)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, _ = p.communicate()
        return None, out.decode(errors="replace")


class Checker:
    def __init__(self, args):
        self.args = args
        self.failures = 0

    def fail(self, what, detail, output):
        self.failures += 1
        print(f"FAILED (seed {self.args.seed}): {what}: {detail}\n--- output ---\n"
              f"{output.rstrip()}\n--- replay: {self.replay()}")

    def replay(self):
        a = self.args
        return (f"{sys.argv[0]} --run {a.run} --mpirun {shlex.quote(a.mpirun)} --split "
                f"{a.split} --seed {a.seed} --mutants {a.mutants} --options {a.options} "
                f"{a.workdir} " + " ".join(a.programs))

    def launch(self, path, workers, extra=()):
        cmd = shlex.split(self.args.mpirun) + ["-np", str(workers), self.args.run, path,
                                               "--steps", "1", "--hidden", "8",
                                               "--batch", "2", "--timeout", "5", *extra]
        return run(cmd, 60)

    def check_mutant(self, path, workers, what):
        check_rc, check_out = run([self.args.run, "--check", path], 30)
        run_rc, run_out = self.launch(path, workers)
        both = check_out + run_out
        if check_rc is None or run_rc is None:
            return self.fail(what, "a hang (killed after its timeout)", both)
        if any(c in both for c in CRASH) or check_rc not in (0, 1) or run_rc >= 128:
            return self.fail(what, f"a crash (--check {check_rc}, run {run_rc})", both)
        if "timed out" in run_out:
            return self.fail(what, "the run timed out instead of refusing at start", run_out)
        named = any(line.startswith((path, "pipeline-run:")) for line in run_out.splitlines())
        if check_rc != 0 and (run_rc == 0 or not named):
            return self.fail(what, "--check refuses, the run does not (cleanly)", both)
        if check_rc == 0 and run_rc != 0 and not named:
            return self.fail(what, "the run fails without a message", run_out)
        verdict = "refused" if check_rc else "trained" if run_rc == 0 else "run refused"
        print(f"ok: {what}: {verdict}")


def write_mutant(mutant, index, args, rng):
    path = os.path.join(args.workdir, f"mutant-{index}.json")
    with open(path, "w") as f:
        json.dump(mutant, f, separators=(",", ":"))
    if rng.random() < 0.5:
        return path, "single document"
    layout = path[:-len(".json")]
    subprocess.run([sys.executable, args.split, path, layout], check=True)
    return layout, "per-rank layout"


# A model option and two of its values: one rank gets the other.
OPTIONS = [("--hidden", "8", "16"), ("--batch", "2", "3"), ("--seed", "1", "2"),
           ("--lr", "0.1", "0.2"), ("--optimizer", "sgd", "adam"), ("--loss", "mse", "ce"),
           ("--activation", "gelu", "relu"), ("--layers-per-stage", "1", "2"),
           ("--steps", "1", "2")]


def check_options(checker, programs, rng):
    name, doc = rng.choice([p for p in programs if p[1]["workers"] > 1])
    option, mine, other = rng.choice(OPTIONS)
    odd = rng.randrange(1, doc["workers"])
    args = checker.args
    base = [args.run, name, "--timeout", "5"]
    cmd = shlex.split(args.mpirun)
    for r in range(doc["workers"]):
        cmd += (["-np", "1"] + base + [option, other if r == odd else mine]
                + (["--steps", "1"] if option != "--steps" else []) + [":"])
    status, out = run(cmd[:-1], 60)
    what = f"{os.path.basename(name)}: {option} {other} on rank {odd} only"
    expect = f"pipeline-run: {option} differs between ranks:"
    if status != 2 or expect not in out or any(c in out for c in CRASH):
        return checker.fail(what, f"not refused at start (status {status})", out)
    print(f"ok: {what}: refused")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--split", required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--mutants", type=int, default=16)
    parser.add_argument("--options", type=int, default=3)
    parser.add_argument("workdir")
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = int(time.time() * 1000) % 1000000007
    print(f"seed {args.seed}")
    rng = random.Random(args.seed)
    os.makedirs(args.workdir, exist_ok=True)
    programs = [(p, json.load(open(p))) for p in args.programs]
    checker = Checker(args)
    for k in range(args.mutants):
        name, doc = rng.choice(programs)
        mutant, what = mutate(doc, rng)
        if mutant is None:
            continue
        path, layout = write_mutant(mutant, k, args, rng)
        checker.check_mutant(path, doc["workers"],
                             f"mutant {k} of {os.path.basename(name)} ({layout}): {what}")
    for _ in range(args.options):
        check_options(checker, programs, rng)
    print(f"{checker.failures} failures (seed {args.seed})")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
