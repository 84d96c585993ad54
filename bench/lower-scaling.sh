#!/usr/bin/env bash
# Measures spec -> verified rank programs -> program JSON in one process
# (pipeline-compile: lowering and writing in one process), wall time and
# peak memory, for growing 1F1B steps on 64 workers.
# Usage: bench/lower-scaling.sh [build-dir]
set -euo pipefail
build="${1:-build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf "%10s %12s %10s %12s %14s\n" jobs microbatches wall_s peak_MiB program_MiB
for B in 128 1024 4096; do
  printf 'sched.step stages = 64, microbatches = %d, workers = 64 strategy #sched.1f1b cost <act = 4096, weights = 65536> {\n}\n' "$B" > "$tmp/spec.mlir"
  /usr/bin/time -f "%e %M" -o "$tmp/time" \
    "$build/bin/pipeline-compile" "$tmp/spec.mlir" -o "$tmp/program.json"
  read -r wall mem < "$tmp/time"
  size=$(stat -c %s "$tmp/program.json")
  printf "%10d %12d %10s %12.1f %14.1f\n" $((2 * 64 * B)) "$B" "$wall" \
    "$(echo "$mem / 1024" | bc -l)" "$(echo "$size / 1048576" | bc -l)"
done
