#!/usr/bin/env python3
"""Checks a --trace file against its program (standard library only):

  check_trace.py TRACE.json PROGRAM.json STEPS

valid JSON with the measured source; per rank a process and both tracks
named; one complete event per top-level op per step per rank, compute ops
on the compute track named <stage><F|B|I|W|G|J|C><microbatch> as the
program's compute ops, the rest on the communication track; every event
with its step, and the steps laid one after another."""
import collections
import json
import sys

LETTERS = {"forward": "F", "backward": "B", "backward_weight": "W",
           "loss_grad": "G", "jacobian": "J", "combine": "C"}


def fail(message):
    sys.exit("check_trace: " + message)


def main():
    trace_path, program_path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(trace_path) as f:
        trace = json.load(f)
    with open(program_path) as f:
        program = json.load(f)
    if trace.get("otherData", {}).get("source") != "measured":
        fail("otherData.source is not 'measured'")
    if trace["otherData"].get("time_unit") != "ns":
        fail("otherData.time_unit is not 'ns'")
    events = trace["traceEvents"]
    ranks = program["ranks"]
    letters = dict(LETTERS)
    if program["split_backward"]:
        letters["backward"] = "I"

    threads = {(e["pid"], e["tid"]): e["args"]["name"]
               for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"]
                 for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    for r in range(len(ranks)):
        if processes.get(r) != "rank %d" % r:
            fail("rank %d's process is not named" % r)
        if threads.get((r, 0)) != "compute" or threads.get((r, 1)) != "communication":
            fail("rank %d's tracks are not named compute and communication" % r)

    slices = [e for e in events if e["ph"] == "X"]
    if any(e["ph"] not in ("M", "X") for e in events):
        fail("an event is neither metadata nor a complete event")
    by_rank_step = collections.defaultdict(list)
    for e in slices:
        if e["dur"] < 0 or e["ts"] < 0:
            fail("negative time in %s" % e)
        by_rank_step[(e["pid"], e["args"]["step"])].append(e)
    for r, rank in enumerate(ranks):
        ops = rank["ops"]
        compute = sorted("%d%s%d" % (op["stage"], letters[op["op"]], op["microbatch"])
                         for op in ops if op["op"] in LETTERS)
        for step in range(1, steps + 1):
            got = by_rank_step.get((r, step), [])
            if len(got) != len(ops):
                fail("rank %d, step %d: %d events for %d ops" % (r, step, len(got), len(ops)))
            for e, op in zip(got, ops):
                if e["cat"] != op["op"]:
                    fail("rank %d, step %d: event %s for op %s" % (r, step, e["name"], op["op"]))
                if e["tid"] != (0 if op["op"] in LETTERS else 1):
                    fail("%s on the wrong track" % e["name"])
            names = sorted(e["name"] for e in got if e["tid"] == 0)
            if names != compute:
                fail("rank %d, step %d: compute events %s, program %s" % (r, step, names, compute))
    if len(slices) != steps * sum(len(rank["ops"]) for rank in ranks):
        fail("%d events in all" % len(slices))
    # Step t + 1 starts after every event of step t ended (3 decimals).
    for step in range(1, steps):
        end = max(e["ts"] + e["dur"] for e in slices if e["args"]["step"] == step)
        start = min(e["ts"] for e in slices if e["args"]["step"] == step + 1)
        if start < end - 0.002:
            fail("step %d starts at %.3f us, before step %d ends at %.3f us"
                 % (step + 1, start, step, end))
    print("check_trace: OK: %d events of %d ranks over %d steps" % (len(slices), len(ranks), steps))


main()
