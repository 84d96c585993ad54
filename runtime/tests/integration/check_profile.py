#!/usr/bin/env python3
"""Checks a --profile cost file (include/pipesched/Program/Costs.h;
standard library only):

  check_profile.py COSTS.json STAGES RANKS [--split]

the format, version and unit; exactly the cost file's keys; a positive
trimmed mean per stage for fwd, bwd and the optimizer step (and bwd_w when
split, else none); the
activation (8 rows x 64 floats) and weight (64 x 64 + 64 floats) bytes of
the default MLP; the transfer fit (zero with one rank, positive with
several); and what `measured` records."""
import json
import sys

KEYS = ["format", "version", "unit", "stages", "fwd", "bwd", "bwd_w",
        "act_bytes", "weight_bytes", "transfer", "optimizer", "measured"]
MEASURED = ["backend", "ranks", "steps", "hidden", "batch", "layers",
            "microbatches", "program", "samples", "statistic"]


def fail(message):
    sys.exit("check_profile: " + message)


def main():
    path, stages, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    split = "--split" in sys.argv[4:]
    with open(path) as f:
        c = json.load(f)
    keys = KEYS + (["reduce"] if ranks > 1 else [])  # one rank reduces nothing
    if sorted(c) != sorted(keys):
        fail("keys %s, expected %s" % (sorted(c), sorted(keys)))
    if ranks > 1 and (c["reduce"]["bytes"] != (64 * 64 + 64) * 4 or c["reduce"]["time"] <= 0):
        fail("reduce %r" % c["reduce"])
    if (c["format"], c["version"], c["unit"]) != ("pipesched-costs", 1, "ns"):
        fail("format %r, version %r, unit %r" % (c["format"], c["version"], c["unit"]))
    if c["stages"] != stages:
        fail("%r stages, expected %d" % (c["stages"], stages))
    for key in ["fwd", "bwd", "optimizer"] + (["bwd_w"] if split else []):
        if len(c[key]) != stages or not all(isinstance(x, (int, float)) and x > 0 for x in c[key]):
            fail("%s: %r, expected %d positive durations" % (key, c[key], stages))
        n = c["measured"]["samples"][key]
        if len(n) != stages or not all(x > 0 for x in n):
            fail("measured.samples.%s: %r" % (key, n))
    if not split and c["bwd_w"] != []:
        fail("bwd_w %r without a split backward" % c["bwd_w"])
    if c["act_bytes"] != 8 * 64 * 4 or c["weight_bytes"] != (64 * 64 + 64) * 4:
        fail("act_bytes %r, weight_bytes %r" % (c["act_bytes"], c["weight_bytes"]))
    t = c["transfer"]
    if sorted(t) != ["latency", "per_byte"] or t["latency"] < 0 or t["per_byte"] < 0:
        fail("transfer %r" % t)
    if ranks == 1 and (t["latency"], t["per_byte"]) != (0, 0):
        fail("transfer %r with one rank" % t)
    if ranks > 1 and t["latency"] + t["per_byte"] <= 0:
        fail("transfer %r: nothing measured" % t)
    m = c["measured"]
    missing = [k for k in MEASURED if k not in m]
    if missing:
        fail("measured lacks %s" % missing)
    if m["ranks"] != ranks or m["statistic"] != "trimmed mean (10% each side)":
        fail("measured %r" % m)
    print("check_profile: OK: %d stages, fwd %s ns, bwd %s ns, transfer %.0f ns + %.3f ns/byte"
          % (stages, c["fwd"], c["bwd"], t["latency"], t["per_byte"]))


main()
