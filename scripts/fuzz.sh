#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ in the instrumented build
# (scripts/build-sanitized.sh: clang-14, ASan + UBSan + coverage, build-asan/)
# and runs each for N seconds (default 60): the .mlir pipeline, the torch
# CSV importer, the cost and layer file readers and the runtime's program
# loader. Seeds come from the test
# suite's own inputs. Findings land in build-asan/fuzz/findings/<target>/,
# logs in build-asan/fuzz/logs/. Ends with one line: "fuzz: P passed, F failed".
#
#   scripts/fuzz.sh [--seconds N] [--jobs J] [target...]
#
# --jobs runs J targets at once (default 1); targets are fuzz-mlir-pipeline,
# fuzz-torch-csv, fuzz-input-files, fuzz-program-loader (default: all).
# Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
jobs=1
targets=()
while (($#)); do
  case "$1" in
  --seconds) seconds="$2"; shift 2 ;;
  --seconds=*) seconds="${1#*=}"; shift ;;
  --jobs) jobs="$2"; shift 2 ;;
  --jobs=*) jobs="${1#*=}"; shift ;;
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
  *) targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --seconds expects a positive integer" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --jobs expects a positive integer" >&2; exit 2; }
((${#targets[@]})) || targets=(fuzz-mlir-pipeline fuzz-torch-csv fuzz-input-files fuzz-program-loader)

build=build-asan
out=$build/fuzz
start=$SECONDS
./scripts/build-sanitized.sh "${targets[@]}"

# Seed corpora from the test suite's inputs, rebuilt every run (the
# corpora the fuzzers grow live in $out/corpus/<target>).
python3 - "$out/seeds" <<'EOF'
import glob, hashlib, os, shutil, sys

out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)

def add(target, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)

def files(*patterns):
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, recursive=True)):
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    yield f.read()

# .mlir: every split of the lit tests (// -----), the examples, the
# runtime's test specs, fuzz/seeds/mlir.
for data in files("test/**/*.mlir", "examples/**/*.mlir",
                  "runtime/tests/programs/*.mlir", "fuzz/seeds/mlir/*"):
    for chunk in data.split(b"\n// -----\n"):
        add("fuzz-mlir-pipeline", chunk)
# The specs again under options of pipeline-lower (fuzz_mlir_pipeline.cpp
# reads a first line "// lower: OPTIONS").
options = [b"prefetch-depth=2", b"prefetch-depth=0 transfer-time=1", b"reorder",
           b"no-memory-cap", b"memory-cap=2", b"memory-cap-bytes=4096",
           b"verify=false", b"bppsa-width=4"]
for data in files("examples/*.mlir", "runtime/tests/programs/*.mlir"):
    for option in options:
        add("fuzz-mlir-pipeline", b"// lower: " + option + b"\n" + data)
for data in files("test/**/*.csv", "runtime/tests/**/*.csv", "fuzz/seeds/csv/*"):
    add("fuzz-torch-csv", data)
# Cost files (first byte even) and layer files (odd; its other bits pick
# the stage count): the JSON inputs of the tests and examples, each both
# ways, and the split lit inputs (`#--- name.json`) too.
def json_inputs():
    for data in files("examples/**/*.json", "test/**/*.json",
                      "test/Transforms/*.test", "fuzz/seeds/files/*"):
        for chunk in data.split(b"\n#--- "):
            start = chunk.find(b"{")
            if start >= 0 and (b"pipesched-costs" in chunk or b"layers" in chunk):
                yield chunk[start:]
for data in json_inputs():
    add("fuzz-input-files", b"\x00" + data)
    add("fuzz-input-files", b"\x03" + data)
# Programs, in JSON and again in CBOR (the loader's other encoding,
# split_program.py's encoder), and fuzz/seeds/cbor.
sys.path.insert(0, "runtime/tests/integration")
from split_program import cbor
import json
for data in files("runtime/tests/programs/**/*.json", "fuzz/seeds/json/*"):
    add("fuzz-program-loader", data)
    try:
        add("fuzz-program-loader", cbor(json.loads(data)))
    except ValueError:  # a seed that is not JSON (or not CBOR-able)
        pass
for data in files("fuzz/seeds/cbor/*"):
    add("fuzz-program-loader", data)
EOF

# Debian's LLVM is not instrumented: LLVM's inline allocators must not
# poison memory the libraries touch. Leaks are findings (detect_leaks).
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
for symbolizer in /usr/lib/llvm-14/bin/llvm-symbolizer /usr/lib/llvm-22/bin/llvm-symbolizer; do
  if [ -x "$symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH="$symbolizer"
    break
  fi
done

run_target() {
  local target="$1" binary="$build/bin/$1"
  local corpus="$out/corpus/$target" findings="$out/findings/$target"
  local log="$out/logs/$target.log" args=()
  mkdir -p "$corpus" "$findings" "$out/logs"
  [ "$target" = fuzz-mlir-pipeline ] && args+=(-dict=fuzz/sched.dict)
  local rc=0
  "$binary" "$corpus" "$out/seeds/$target" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$findings/" -print_final_stats=1 "${args[@]}" \
    >"$log" 2>&1 || rc=$?
  echo "$rc" >"$out/logs/$target.rc"
}

rm -f "$out"/logs/*.rc
running=0
for target in "${targets[@]}"; do
  if [ ! -x "$build/bin/$target" ]; then
    echo "fuzz: $target was not built" >&2
    mkdir -p "$out/logs" && echo 127 >"$out/logs/$target.rc"
    continue
  fi
  echo "fuzz: running $target for $seconds s"
  run_target "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

passed=0
failed=0
for target in "${targets[@]}"; do
  rc=$(cat "$out/logs/$target.rc" 2>/dev/null || echo 1)
  log="$out/logs/$target.log"
  stats=$(grep -aE '^stat::number_of_executed_units' "$log" 2>/dev/null | awk '{print $2}' || true)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: PASS $target (${stats:-?} runs)"
  else
    failed=$((failed + 1))
    what=$(grep -a -m1 -E '^==[0-9]+==ERROR|SUMMARY|runtime error|ALARM|out-of-memory|deadly signal|uncaught exception' "$log" 2>/dev/null || true)
    artifact=$(grep -a -m1 -oE "Test unit written to [^ ]+" "$log" 2>/dev/null | sed 's/Test unit written to //' || true)
    echo "fuzz: FAIL $target (exit $rc): ${what:-see $log}${artifact:+ -> $artifact}"
  fi
done
echo "fuzz: total $((SECONDS - start)) s (logs in $out/logs)"
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
