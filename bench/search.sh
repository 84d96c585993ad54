#!/usr/bin/env bash
# Measures --sched-search: candidate schedules simulated per second on
# steps of about 10^3 jobs, all candidates simulated (top = 1000, the
# most, ranks them all: no bound skips any) and with the default top = 10
# (branch and bound), in one pipeline-opt process per mode (the pass
# simulates candidates in parallel on the machine's cores).
# test/Tools/bench-search.test runs it on 2 steps so that it never rots.
# Usage: bench/search.sh [build-dir] [steps]   (default: build, 160 steps)
set -euo pipefail
build="${1:-build}"
steps="${2:-160}"
opt="$build/bin/pipeline-opt"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Steps of 1,024 to 1,536 jobs: S = 8 stages, B = 64 microbatches, W = 4 or
# 8 workers, split or whole backwards, cost ratios and limits varied.
{
  echo "module {"
  for ((i = 0; i < steps; ++i)); do
    W=$((i % 2 ? 8 : 4))
    f=$((1 + i % 3)); b=$((1 + (i / 3) % 3)); w=$((1 + (i / 9) % 2))
    if ((i % 4 < 2)); then cost="fwd = $f, bwd = $((f + b))"; else cost="fwd = $f, bwd = $b, bwd_w = $w"; fi
    printf '  sched.step stages = 8, microbatches = 64, workers = %d cost <%s> {\n  }\n' "$W" "$cost"
  done
  echo "}"
} > "$tmp/steps.mlir"

run() { # mode, options, [pipeline-opt flags]
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$opt" "$tmp/steps.mlir" ${3:-} \
    --sched-search="format=json $2" -o /dev/null > "$tmp/out" 2> "$tmp/err" ||
    { head -5 "$tmp/err" >&2; exit 1; }
  read -r wall rss < "$tmp/time"
  python3 -c '
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
n = sum(s["candidates"] for s in steps)
sim = sum(s["simulated"] for s in steps)
sec = sum(s["seconds"] for s in steps)
mode, wall, rss = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
print("%-16s %8d %10d %10.2f %10.2f %12.0f %10.1f" % (mode, n, sim, sec, wall, sim / sec, rss / 1024))
' "$tmp/out" "$1" "$wall" "$rss"
}
echo "steps: $steps, each S = 8, B = 64, W = 4 or 8 (1,024 or 1,536 jobs); $(nproc) cores"
printf "%-16s %8s %10s %10s %10s %12s %10s\n" mode candidates simulated search_s process_s simulated/s peak_MiB
run "all simulated" "top=1000 memory-limit=8"
run "all, 1 thread" "top=1000 memory-limit=8" --mlir-disable-threading
run "top = 10" "top=10 memory-limit=8"
