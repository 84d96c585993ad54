#!/usr/bin/env bash
# BPPSA against back-propagation on this CPU: the table of docs/bppsa.md
# ("Measured") on stdout, its CSV in <build>/bppsa-bench.csv.
# Usage: bench/bppsa.sh [build-dir] [--quick]
set -euo pipefail
build="${1:-build}"
shift || true
bench="$build/bin/pipesched-bench-bppsa"
[ -x "$bench" ] || { echo "bench/bppsa.sh: $bench not built (ninja -C $build pipesched-bench-bppsa)" >&2; exit 1; }
echo "# $(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), rows = 4, W = 8"
"$bench" "$@" --csv "$build/bppsa-bench.csv"
