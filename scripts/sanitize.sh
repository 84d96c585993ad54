#!/usr/bin/env bash
# Builds the instrumented build of pipesched (scripts/build-sanitized.sh:
# clang-14, AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/)
# and runs the whole lit suite on it, the way scripts/test.sh runs it on
# build/: the compiler's suite (build-asan/test: pipeline-opt,
# pipeline-translate, pipeline-compile, the unit tests, the docs and the
# installed package) and the runtime's (build-asan/runtime/tests:
# pipeline-run's unit tests and its integration tests under mpirun), with
# leaks checked. Ends with one line: "sanitize: P passed, F failed".
#
#   scripts/sanitize.sh            (installs what it needs; needs no build/)
#
# AddressSanitizer and LeakSanitizer reports are written to
# build-asan/sanitizer-reports/ rather than to stderr (log_path), because a
# test that expects a failure (`not`, `!`, a FileCheck of stderr) would
# otherwise pass on a process that aborts with a report, e.g. a leak on an
# error path. After lit, each report is printed with the test(s) running when
# it was written, and a test that lit passed but that left a report counts as
# failed. UBSan's reports stay on stderr: a test that lit passed with one in
# its output counts as failed too. OpenMPI's own leaks are kept out by
# scripts/sanitize-mpi.cpp (linked into pipeline-run here) and
# scripts/lsan.supp (third-party libraries only; each entry says why).
#
# Every test of both suites runs (CUDA tests are unsupported without the
# backend, as in the normal build without a GPU) but four. The GPU kit's
# two (integration/gpu-kit*.test) test its packaging, not memory: they
# would rerun, for minutes, checks the other tests already run here. And
# runtime/tests/integration/faults.test, whose cases must end within a
# wall-clock bound of 10-20 s sized for the optimized build: pipeline-run's
# kernels run ~20 times slower here (-O1, every load and store checked), and
# its --verify reference alone takes 10-11 s of a 12 s bound. It ran clean
# under the sanitizers otherwise (no report, one case over its bound).
# And test/Transforms/search-tight.test: 294 searches of tiny and small
# steps under tight limits (6 minutes here, 50 s optimized), the same code
# that search-exact.test, search-grid.test, sched-search.mlir and the unit
# tests of the list scheduler and the exact solver run here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build-asan
lit=/usr/lib/llvm-22/bin/lit
jobs="${PIPESCHED_JOBS:-2}"
start=$SECONDS
./scripts/build-sanitized.sh

reports="$root/$build/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
symbolizer=/usr/lib/llvm-22/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
# allow_user_poisoning=0: Debian's LLVM is not instrumented, and the inline
# allocators of its headers (compiled here with ASan) poison memory that the
# library then touches.
log="log_path=$reports/report:log_exe_name=1"
export ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=0:abort_on_error=1:$log"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

results="$build/test-results.json"
timing="$build/test-timing.json"
suites=("$build/test")
[ -f "$build/runtime/tests/lit.site.cfg.py" ] && suites+=("$build/runtime/tests")
lit_start=$SECONDS
rc=0
# Wall-clock bounds sized for the optimized build (see above).
skip='integration/(faults|gpu-kit|gpu-kit-cuda-hidden)\.test$|Transforms/search-tight\.test$'
"$lit" -sv -j "$jobs" --filter-out "$skip" --output "$results" --resultdb-output "$timing" "${suites[@]}" || rc=$?
echo "[sanitize] tests ran in $((SECONDS - lit_start)) s (total $((SECONDS - start)) s)"

python3 - "$results" "$timing" "$reports" <<'EOF' || rc=1
import datetime, json, os, sys

results, timing, reports = sys.argv[1:]
PASSED = {"PASS", "XFAIL", "FLAKYPASS"}
SKIPPED = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}
tests = json.load(open(results))["tests"]
code = {t["name"]: t["code"] for t in tests}

# When each test ran (lit's ResultDB output), to name the tests running
# when a report was written (lit runs several at once).
def seconds(iso):
    return datetime.datetime.fromisoformat(iso.rstrip("Z")).timestamp()
windows = []
for t in json.load(open(timing)).get("tests", []):
    begin = seconds(t["start_time"])
    windows.append((t["testId"], begin, begin + float(t["duration"].rstrip("s"))))

reported = set()
files = sorted(os.listdir(reports))
for name in files:
    path = os.path.join(reports, name)
    when = os.path.getmtime(path)
    running = sorted(n for n, b, e in windows if b - 1 <= when <= e + 1)
    # A report failed a test that lit failed (an abort, a leak at exit), or
    # else one that lit passed, which then counts as failed.
    if not any(code.get(n) not in PASSED | SKIPPED for n in running):
        passed = [n for n in running if code.get(n) in PASSED]
        if passed:
            reported.add(passed[0])
    text = open(path, errors="replace").read().splitlines()
    print(f"=== sanitizer report {name} (while running: {', '.join(running) or '?'})")
    print("\n".join(text[:60] + (["  [...]"] if len(text) > 60 else [])))

# UBSan writes to stderr: a test that lit passed with a report in its output.
MARKS = ("runtime error: ", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer")
for t in tests:
    if t["code"] in PASSED and any(m in (t.get("output") or "") for m in MARKS):
        reported.add(t["name"])
        print(f"=== sanitizer report in the output of {t['name']}")
        print(t["output"][-4000:])

for n in sorted(reported):
    code[n] = "SANITIZER"
passed = sum(c in PASSED for c in code.values())
skipped = sum(c in SKIPPED for c in code.values())
failed = len(code) - passed - skipped
for n, c in sorted(code.items()):
    if c not in PASSED | SKIPPED:
        print(f"FAILED: {n} ({c})")
if files:
    print(f"({len(files)} sanitizer reports in {reports})")
if skipped:
    print(f"({skipped} skipped)")
print(f"sanitize: {passed} passed, {failed} failed")
sys.exit(1 if failed or files or not code else 0)
EOF
exit "$rc"
