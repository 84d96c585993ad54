#!/usr/bin/env bash
# Sets up and builds pipesched, then runs every test suite:
#  1. lit on build/: the regression tests, the examples of docs/, the unit
#     tests (lit's GoogleTest format), the installed package and the
#     embedding example, the runtime's unit and integration tests (mpirun);
#  2. scripts/sanitize.sh: the same suites on the ASan + UBSan build
#     (build-asan/), leaks checked;
#  3. scripts/fuzz.sh: each libFuzzer target for PIPESCHED_FUZZ_SECONDS
#     (default 60), two at a time, on the same instrumented build.
# Each suite ends with a line "P passed, F failed"; a suite that stops
# before it (a build error) counts as one failure. Ends with one line
# summing all suites: "N passed, N failed".
#
# PIPESCHED_QUICK=1 runs suite 1 only (the edit-build-test loop).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
./scripts/setup.sh
# Test-only: headless Chromium renders the diagrams and the report
# (test/Tools/render-chromium.test).
./scripts/install-packages.sh chromium

logs=build/test-logs
mkdir -p "$logs"
total_passed=0
total_failed=0
rc=0

# Runs one suite, its output also in $logs/NAME.log, and adds its last
# "P passed, F failed" line to the totals.
suite() {
  local name="$1" suite_start=$SECONDS
  shift
  "$@" 2>&1 | tee "$logs/$name.log" || rc=1
  local last
  last=$(grep -aoE '[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -1 || true)
  if [ -n "$last" ]; then
    local p f
    read -r p _ f _ <<<"${last//,/}"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
  else
    echo "[test] $name ended without a summary line: counted as 1 failed"
    total_failed=$((total_failed + 1))
    rc=1
  fi
  echo "[test] $name: ${last:-no summary} in $((SECONDS - suite_start)) s"
}

lit_suite() {
  local results=build/test-results.json suites=(build/test) status=0
  # The runtime's suite (runtime/tests: unit, integration under mpirun).
  [ -f build/runtime/tests/lit.site.cfg.py ] && suites+=(build/runtime/tests)
  /usr/lib/llvm-22/bin/lit -sv --output "$results" "${suites[@]}" || status=$?
  python3 scripts/summarize-lit.py "$results" || status=1
  return "$status"
}

suite lit lit_suite
if [ "${PIPESCHED_QUICK:-0}" != 1 ]; then
  suite sanitize ./scripts/sanitize.sh
  suite fuzz ./scripts/fuzz.sh --jobs 2 --seconds "${PIPESCHED_FUZZ_SECONDS:-60}"
fi
echo "[test] all suites in $((SECONDS - start)) s (logs in $logs)"
echo "$total_passed passed, $total_failed failed"
[ "$rc" = 0 ] && [ "$total_failed" = 0 ]
