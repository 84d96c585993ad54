#!/usr/bin/env python3
"""Checks an SVG diagram of --sched-to-svg: it parses as XML, has the
expected number of job boxes, and one transfer line per tensor received and
one fetch line per weight fetch that --sched-stats=json reports.

usage: check-svg.py DIAGRAM.svg STATS.json --boxes N
"""
import argparse
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"

parser = argparse.ArgumentParser()
parser.add_argument("svg")
parser.add_argument("stats")
parser.add_argument("--boxes", type=int, required=True)
args = parser.parse_args()

root = ET.parse(args.svg).getroot()  # raises on malformed XML
if root.tag != SVG + "svg":
    sys.exit(f"root element is {root.tag}, not svg")
classes = [e.get("class") for e in root.iter()]
boxes = classes.count("job")
transfers = classes.count("transfer") - 1  # minus the legend's sample
fetches = classes.count("fetch") - 1
step = json.load(open(args.stats))["steps"][0]
expected = {
    "job boxes": (boxes, args.boxes),
    "transfer lines": (transfers, step["act_recv"] + step["grad_recv"]),
    "weight fetch lines": (fetches, step["weight_fetches"]),
}
for what, (got, want) in expected.items():
    if got != want:
        sys.exit(f"{args.svg}: {got} {what}, expected {want}")
# Every box has a tooltip naming its job.
for rect in root.iter(SVG + "rect"):
    if rect.get("class") == "job":
        title = rect.find(SVG + "title")
        if title is None or not title.text.startswith(
                rect.get("data-stage") + rect.get("data-kind")):
            sys.exit(f"{args.svg}: a job box without its title: {rect.attrib}")
print(f"ok: {boxes} job boxes, {transfers} transfers, {fetches} weight fetches")
