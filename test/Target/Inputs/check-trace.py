#!/usr/bin/env python3
"""Checks a Chrome trace of --sched-to-trace: valid JSON in the Trace Event
Format, a named process with a compute and a communication track per rank,
one compute slice per job box, and a send and a receive slice for each tensor
received and each weight fetch that --sched-stats=json reports.

usage: check-trace.py TRACE.json STATS.json --boxes N
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("stats")
parser.add_argument("--boxes", type=int, required=True)
args = parser.parse_args()

doc = json.load(open(args.trace))
step = json.load(open(args.stats))["steps"][0]
events = doc["traceEvents"]
workers = step["workers"]
names = {(e["pid"], e["tid"]): e["args"]["name"]
         for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
processes = {e["pid"]: e["args"]["name"]
             for e in events if e["ph"] == "M" and e["name"] == "process_name"}
for r in range(workers):
    if processes.get(r) != f"rank {r}":
        sys.exit(f"rank {r}: process named {processes.get(r)!r}")
    if names.get((r, 0)) != "compute" or names.get((r, 1)) != "communication":
        sys.exit(f"rank {r}: tracks {names.get((r, 0))!r}, {names.get((r, 1))!r}")
slices = [e for e in events if e["ph"] == "X"]
for e in slices:
    if e["dur"] < 0 or e["ts"] < 0 or not 0 <= e["pid"] < workers:
        sys.exit(f"bad slice {e}")
compute = [e for e in slices if e["tid"] == 0]
comm = [e for e in slices if e["tid"] == 1]
tensors = step["act_recv"] + step["grad_recv"] + step["weight_fetches"]
if len(compute) != args.boxes:
    sys.exit(f"{len(compute)} compute slices, expected {args.boxes}")
if len(comm) != 2 * tensors:
    sys.exit(f"{len(comm)} communication slices, expected 2 x {tensors}")
for e in compute:
    a = e["args"]
    first = e["name"].split(";")[0]  # an overlapped pair names both jobs
    if not first.startswith(str(a["stage"])) or not first.endswith(str(a["microbatch"])):
        sys.exit(f"compute slice named {e['name']!r} with args {a}")
end = max(e["ts"] + e["dur"] for e in compute)
print(f"ok: {len(compute)} compute and {len(comm)} communication slices on "
      f"{workers} ranks, last job ends at {end:g} us "
      f"({doc['otherData']['source']}, {doc['otherData']['time_unit']})")
