#!/usr/bin/env bash
# Loading a big program (docs/program-format.md, "Big programs"): 1F1B with
# S = 128, B = 4096, W = 128 (1,048,576 jobs) compiled once, written as one
# JSON document, one CBOR document and the per-rank layout in JSON and CBOR;
# then the time and peak memory of `pipeline-run --check` on each, and of
# the load of one rank (what a rank of a run reads: the index and its file).
# Usage: bench/load.sh [build-dir] [work-dir]   (work-dir needs ~1 GB)
set -euo pipefail
build="${1:-build}"
work="${2:-$(mktemp -d)}"
bin="$build/bin"
for tool in pipeline-compile pipeline-run pipesched-bench-load; do
  [ -x "$bin/$tool" ] || { echo "bench/load.sh: $bin/$tool not built" >&2; exit 1; }
done
mkdir -p "$work/json" "$work/cbor"
printf 'sched.step stages = 128, microbatches = 4096, workers = 128 strategy #sched.1f1b cost <act = 4096, weights = 65536> {\n}\n' >"$work/big.mlir"
"$bin/pipeline-compile" "$work/big.mlir" -o "$work/big.json"
"$bin/pipesched-bench-load" convert "$work/big.json" "$work/big.cbor"
"$bin/pipesched-bench-load" split "$work/big.json" "$work/json" json
"$bin/pipesched-bench-load" split "$work/big.json" "$work/cbor" cbor
echo "# $(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
for p in big.json big.cbor json cbor; do
  echo "## $p: $(du -sb "$work/$p" | cut -f1) bytes"
  /usr/bin/time -f "   %e s, peak %M KB" "$bin/pipeline-run" --check "$work/$p"
done
for p in json cbor; do
  /usr/bin/time -f "   %e s, peak %M KB" "$bin/pipesched-bench-load" load "$work/$p" 64
done
