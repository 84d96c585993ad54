#!/usr/bin/env bash
# Runs the runtime's integration tests without lit, the way lit would:
#
#   run.sh <build>/tests/integration-config.sh [TEST.test ...]
#
# (all tests of this directory when none is named). Each test's "RUN:" lines
# get lit's substitutions and run in bash as one chain `{ a; } && { b; }`;
# a test passes when the chain succeeds. "REQUIRES: pipeline-translate"
# skips a test when the compiler's tools (pipeline-translate,
# pipeline-compile) are missing, "REQUIRES: cuda-backend" when
# pipeline-run has no CUDA backend. Prints "N passed, M failed".
set -u
config=$1
shift
# shellcheck source=/dev/null
source "$config"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -eq 0 ]; then
  set -- "$here"/*.test
fi

passed=0
failed=0
skipped=0
for test in "$@"; do
  name=$(basename "$test" .test)
  if grep -q '^# REQUIRES: pipeline-translate' "$test" &&
    { [ ! -x "$PIPELINE_TRANSLATE" ] || [ ! -x "$PIPELINE_COMPILE" ]; }; then
    skipped=$((skipped + 1))
    echo "UNSUPPORTED: $name (no $PIPELINE_TRANSLATE or $PIPELINE_COMPILE)"
    continue
  fi
  if grep -q '^# REQUIRES: cuda-backend' "$test" && [ "${CUDA_BACKEND:-OFF}" != ON ]; then
    skipped=$((skipped + 1))
    echo "UNSUPPORTED: $name (pipeline-run built without the CUDA backend)"
    continue
  fi
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/pipesched-rt-$name.XXXXXX")
  # %% is a literal %: parked as \001 while the other substitutions run.
  script=$(sed -n 's/^# RUN: \{0,1\}//p' "$test" | sed \
    -e 's|%%|\x01|g' -e "s|%pipeline-run|$PIPELINE_RUN|g" \
    -e "s|%pipeline-translate|$PIPELINE_TRANSLATE|g" -e "s|%pipeline-compile|$PIPELINE_COMPILE|g" \
    -e "s|%nan-plugin|$NAN_PLUGIN|g" -e "s|%stall-plugin|$STALL_PLUGIN|g" \
    -e "s|%error-plugin|$ERROR_PLUGIN|g" -e "s|%load-stall-plugin|$LOAD_STALL_PLUGIN|g" \
    -e "s|%examples|$EXAMPLES|g" -e "s|%programs|$PROGRAMS|g" \
    -e "s|%plugin|$PLUGIN|g" -e "s|%python|$PYTHON|g" -e "s|%mpirun|$MPIRUN|g" \
    -e "s|%t|$tmp/t|g" -e "s|%s|$test|g" -e "s|%S|$(dirname "$test")|g" -e 's|\x01|%|g' |
    awk 'NR > 1 { printf " &&\n" } { printf "{ %s; }", $0 } END { print "" }')
  start=$(date +%s.%N)
  if (cd "$tmp" && bash -o pipefail -c "$script") >"$tmp/log" 2>&1; then
    passed=$((passed + 1))
    awk -v n="$name" -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "PASS: %s (%.1f s)\n", n, b - a }'
    rm -rf "$tmp"
  else
    failed=$((failed + 1))
    printf 'FAIL: %s\n--- script:\n%s\n--- output (%s):\n' "$name" "$script" "$tmp/log"
    tail -n 30 "$tmp/log"
  fi
done
echo "$passed passed, $failed failed, $skipped unsupported"
[ "$failed" -eq 0 ]
