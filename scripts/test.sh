#!/usr/bin/env bash
# Sets up and builds pipesched, then runs every test suite (lit regression
# tests, the examples of docs/, and the unit tests through lit's GoogleTest
# format). Ends with one line: "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

results=build/test-results.json
rc=0
suites=(build/test)
# The runtime's suite (runtime/tests: unit, integration under mpirun).
[ -f build/runtime/tests/lit.site.cfg.py ] && suites+=(build/runtime/tests)
/usr/lib/llvm-22/bin/lit -sv --output "$results" "${suites[@]}" || rc=$?
python3 scripts/summarize-lit.py "$results" || rc=1
exit "$rc"
