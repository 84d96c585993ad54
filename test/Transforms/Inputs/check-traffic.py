#!/usr/bin/env python3
"""Checks that the lowered programs move exactly the traffic --sched-stats
reports: point-to-point tensor transfers = activations + gradients
received, weight fetches = weight fetches, per worker. Usage:
check-traffic.py <pipeline-opt> <spec.mlir>..."""
import json
import re
import subprocess
import sys

opt, specs = sys.argv[1], sys.argv[2:]
for spec in specs:
    stats = json.loads(subprocess.run(
        [opt, spec, "--sched-expand", "--sched-place", "--sched-simulate",
         "--sched-stats=json", "-o", "/dev/null"],
        check=True, capture_output=True, text=True).stdout)["steps"][0]
    lowered = subprocess.run([opt, spec, "--pipeline-lower"], check=True,
                             capture_output=True, text=True).stdout
    recv, fetch, rank = {}, {}, None
    for line in lowered.splitlines():
        m = re.search(r"sched\.rank (\d+)", line)
        if m:
            rank = int(m.group(1))
        recv[rank] = recv.get(rank, 0) + ("sched.recv " in line)
        fetch[rank] = fetch.get(rank, 0) + ("sched.fetch_weights" in line)
    for w in stats["per_worker"]:
        r = w["worker"]
        want = (w["act_recv"] + w["grad_recv"], w["weight_fetches"])
        got = (recv.get(r, 0), fetch.get(r, 0))
        if want != got:
            sys.exit(f"{spec}: worker {r}: stats say (transfers, fetches) = "
                     f"{want}, the program has {got}")
    print(f"{spec}: {sum(recv.values())} transfers, "
          f"{sum(fetch.values())} fetches: match")
