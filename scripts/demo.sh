#!/usr/bin/env bash
# Sets up and builds pipesched, then runs the main job on an example
# schedule: report what it costs, compile it to one program per rank, and
# train the built-in MLP with it on the CPU backend under mpirun, checking
# the trained weights against a single-process reference.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
example="${1:-examples/1f1b.mlir}"
workers=$(grep -oE 'workers = [0-9]+' "$example" | grep -oE '[0-9]+')

echo "== $example: simulated cost (pipeline-opt --sched-stats)"
build/bin/pipeline-opt --sched-expand --sched-place --sched-simulate --sched-stats "$example" -o /dev/null

echo "== compile to per-rank programs (pipeline-compile)"
build/bin/pipeline-compile "$example" -o build/demo-program.json
echo "build/demo-program.json: $workers ranks, $(grep -c '"op"' build/demo-program.json) lines of ops"

echo "== train on the CPU backend: mpirun -np $workers pipeline-run"
mpi=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
mpirun "${mpi[@]}" -np "$workers" build/bin/pipeline-run build/demo-program.json --steps 20 --optimizer adam --verify
