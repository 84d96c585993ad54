#!/usr/bin/env bash
# Measures expand + place + simulate (+ stats) wall time and peak memory of
# pipeline-opt from 10^4 to 10^6 jobs (1F1B, S = 64 stages on 64 workers).
# Usage: bench/simulate-scaling.sh [build-dir]
set -euo pipefail
build="${1:-build}"
opt="$build/bin/pipeline-opt"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf "%10s %12s %10s %10s %10s %12s\n" jobs microbatches expand_s place_s simulate_s peak_MiB
for B in 78 780 7812; do
  jobs=$((2 * 64 * B))
  printf 'sched.step stages = 64, microbatches = %d, workers = 64 strategy #sched.1f1b {\n}\n' "$B" > "$tmp/spec.mlir"
  # --verify-each=0: time the passes, not the verifier between them.
  /usr/bin/time -f "%M" -o "$tmp/mem" "$opt" "$tmp/spec.mlir" --verify-each=0 \
    --sched-expand --sched-place --sched-simulate --mlir-timing \
    --mlir-output-format=text -o /dev/null 2> "$tmp/timing" || { cat "$tmp/timing"; exit 1; }
  pass() { awk -v p="$1" '$0 ~ p { print $1; exit }' "$tmp/timing"; }
  printf "%10d %12d %10s %10s %10s %12.1f\n" "$jobs" "$B" "$(pass SchedExpand)" \
    "$(pass SchedPlace)" "$(pass SchedSimulate)" "$(echo "$(cat "$tmp/mem") / 1024" | bc -l)"
done
