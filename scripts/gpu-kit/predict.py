#!/usr/bin/env python3
"""Predicted against measured step time (docs/gpu.md, "Measurements"): for
each step_time record of a kit run's results, compiles the program's spec
(runtime/tests/gpu/specs/) with the costs --profile measured in that run
(pipeline-opt --sched-calibrate, the compiler's own prediction) and appends
a prediction record: predicted ms, measured ms, error. The order of the
programs measured (GPipe, 1F1B) does not depend on the costs, so the
program measured is the one predicted.

    predict.py RESULTS_DIR        # the folder run.sh wrote (OUT)

PIPELINE_OPT: the compiler (default: build/bin/pipeline-opt)."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from result import main as append_result  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
PREDICTED = re.compile(r"^predicted step time: ([0-9.]+) ms", re.M)


def predicted_ms(opt, spec, costs):
    out = subprocess.run(
        [opt, f"--sched-calibrate=costs={costs}", "--pipeline-schedule", "--sched-stats",
         spec, "-o", os.devnull], capture_output=True, text=True, timeout=120)
    match = PREDICTED.search(out.stdout)
    if out.returncode or not match:
        raise RuntimeError(f"{opt} on {spec} with {costs}: {out.stderr.strip() or 'no prediction'}")
    return float(match.group(1))


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    folder = argv[1]
    results = os.path.join(folder, "gpu-results.jsonl")
    opt = os.environ.get("PIPELINE_OPT", os.path.join(ROOT, "build", "bin", "pipeline-opt"))
    records = [json.loads(line) for line in open(results, encoding="utf-8")]
    status = 0
    for r in records:
        if r.get("name") != "step_time" or "measured_ms" not in r:
            continue
        spec = os.path.join(ROOT, "runtime", "tests", "gpu", "specs", r["program"] + ".mlir")
        try:
            predicted = predicted_ms(opt, spec, os.path.join(folder, r["costs"]))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"predict: {e}", file=sys.stderr)
            status = 1
            continue
        measured = float(r["measured_ms"])
        error = (predicted - measured) / measured * 100
        print(f"predict: {r['program']} on {r['ranks']} rank(s): predicted {predicted:.3f} ms, "
              f"measured {measured:.3f} ms: error {error:+.1f}%")
        append_result(["", results, "measure", "prediction", f"program={r['program']}",
                       f"ranks={r['ranks']}", f"predicted_ms={predicted:.3f}",
                       f"measured_ms={measured}", f"error_percent={error:.2f}"])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
