#!/usr/bin/env python3
"""Prints 'N passed, N failed' from lit's JSON results (all suites counted)."""
import json
import sys

PASSED = {"PASS", "XFAIL", "FLAKYPASS"}
SKIPPED = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}

with open(sys.argv[1]) as f:
    tests = json.load(f)["tests"]
passed = sum(t["code"] in PASSED for t in tests)
skipped = sum(t["code"] in SKIPPED for t in tests)
failed = len(tests) - passed - skipped
for t in tests:
    if t["code"] not in PASSED | SKIPPED:
        print(f"FAILED: {t['name']} ({t['code']})")
if skipped:
    print(f"({skipped} skipped)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or not tests else 0)
