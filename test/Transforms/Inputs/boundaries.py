#!/usr/bin/env python3
"""Every scheduler at its boundaries, against closed forms. Usage:

  boundaries.py PIPELINE-COMPILE

For every strategy family (list-scheduled or a static order):
- one worker: nothing overlaps, the makespan is the total work
  S * B * (fwd + bwd + bwd_w), whatever the order;
- zero-time jobs: the makespan is 0;
- one microbatch, for the list-scheduled families: the makespan is the
  critical path S * (fwd + bwd), plus stage 0's bwd_w when split;
- a memory cap exactly at the need of one worker running one microbatch
  at a time (S activations) runs in the total work; one less deadlocks.
Each case is compiled to a program (simulation, lowering, the deadlock
proof, the replay); the simulated and the replayed makespans must both
equal the closed form. Prints one line per case and a summary; exits 1 on
any mismatch."""
import json
import os
import subprocess
import sys
import tempfile

compiler = sys.argv[1]

# family -> (strategy attribute for S stages on W workers, S for W, split)
def strategies(W):
    v = 3
    return [
        ("ddp", "#sched.ddp", 3, False),
        ("fsdp", "#sched.fsdp", 3, False),
        ("gpipe", "#sched.gpipe", 3 * W, False),
        ("1f1b", "#sched.1f1b", 3 * W, False),
        ("interleaved_1f1b", f"#sched.interleaved_1f1b<chunks = {v}>", v * W, False),
        ("looped_bfs", f"#sched.looped_bfs<chunks = {v}>", v * W, False),
        ("zb_h1", f"#sched.zb_h1<chunks = {v}>", v * W, True),
        ("zb_h2", "#sched.zb_h2", W, True),
        ("zbv", "#sched.zbv", 2 * W, True),
        ("v_half", "#sched.v_half", 2 * W, True),
        ("v_min", "#sched.v_min", 2 * W, True),
        ("dualpipev", "#sched.dualpipev", 2 * W, True),
        ("lpp", f"#sched.lpp<groups = 1, ring = {W}>", 2 * W, False),
        ("fslpp", f"#sched.fslpp<groups = 1, ring = {W}>", 2 * W, False),
    ]

LIST_SCHEDULED = {"ddp", "fsdp", "gpipe", "1f1b", "lpp", "fslpp"}


def compile_makespans(spec, tmp):
    path = os.path.join(tmp, "spec.mlir")
    with open(path, "w") as f:
        f.write(spec)
    out = os.path.join(tmp, "program.json")
    p = subprocess.run([compiler, path, "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else "failed"
    program = json.load(open(out))
    return (program["makespan"], program["replayed_makespan"]), ""


def cost(split, f, b, w):
    return (f"cost <fwd = {f}, bwd = {b}, bwd_w = {w}>" if split
            else f"cost <fwd = {f}, bwd = {b}>")


def cases():
    for name, attr, S, split in strategies(1):
        B = 2 if name == "dualpipev" else 3
        f, b, w = 2, 3, (1 if split else 0)
        yield (f"{name}: one worker, S={S} B={B}",
               f"sched.step stages = {S}, microbatches = {B}, workers = 1 "
               f"strategy {attr} {cost(split, f, b, w)} {{}}\n", S * B * (f + b + w))
        yield (f"{name}: zero-time jobs, S={S} B={B}",
               f"sched.step stages = {S}, microbatches = {B}, workers = 1 "
               f"strategy {attr} {cost(split, 0, 0, 0)} {{}}\n", 0)
    for name, attr, S, split in strategies(2):
        if name not in LIST_SCHEDULED:
            continue
        B = 2 if name in ("ddp", "fsdp") else 1
        W = 2
        f, b = 2, 3
        # DDP and FSDP: two microbatches on two workers, each runs one alone.
        want = S * (f + b)
        yield (f"{name}: one microbatch per worker, S={S} B={B} W={W}",
               f"sched.step stages = {S}, microbatches = {B}, workers = {W} "
               f"strategy {attr} {cost(False, f, b, 0)} {{}}\n", want)
    for S in (2, 3):
        for cap, want in ((S, S * 2 * 3), (S - 1, None)):
            yield (f"gpipe: one worker, S={S} B=2, cap {cap} of a need of {S}",
                   f"sched.step stages = {S}, microbatches = 2, workers = 1 "
                   f"strategy #sched.gpipe cap <units = {cap}> "
                   f"cost <fwd = 1, bwd = 2> {{}}\n", want)


failed = total = 0
with tempfile.TemporaryDirectory() as tmp:
    for title, spec, want in cases():
        total += 1
        got, error = compile_makespans(spec, tmp)
        if want is None:
            ok = got is None and "deadlock" in error
            line = f"{title}: refused (deadlock)" if ok else f"{title}: {got or error}, expected a deadlock"
        else:
            ok = got == (want, want)
            line = (f"{title}: makespan {want}, replayed {want}" if ok else
                    f"{title}: (makespan, replayed) = {got or error}, expected {want}")
        print(("" if ok else "FAIL: ") + line)
        if not ok:
            failed += 1
            print(f"FAIL: {line}\n{spec}", file=sys.stderr)
print(f"{total} boundary cases: {total - failed} at their closed form, {failed} failed")
sys.exit(1 if failed else 0)
