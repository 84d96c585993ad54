#!/usr/bin/env python3
"""The end of a kit run's log: the checks' counts, the failed ones, and
each measurement on a line (docs/gpu.md, "Results").

    summarize.py RESULTS_JSONL"""
import json
import sys


def main(argv):
    records = [json.loads(line) for line in open(argv[1], encoding="utf-8")]
    checks = [r for r in records if r["kind"] == "check"]
    counts = {s: sum(r["status"] == s for r in checks) for s in ("PASS", "FAIL", "SKIP")}
    for r in records:
        if r["kind"] in ("env", "step", "measure"):
            rest = ", ".join(f"{k}={v}" for k, v in sorted(r.items()) if k not in ("kind", "name"))
            print(f"{r['kind']} {r['name']}: {rest}")
    for r in checks:
        if r["status"] == "FAIL":
            print(f"FAIL {r['name']}: {r['detail']}")
    print(f"checks: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")


if __name__ == "__main__":
    main(sys.argv)
