#!/usr/bin/env bash
# Sets up and builds pipesched, then runs the main job on an example
# schedule: report what it costs, compile it to one program per rank,
# measure this machine with it (pipeline-run --profile), compile it again
# with those costs so that the compiler predicts the step time in
# milliseconds, and train the built-in MLP with it on the CPU backend under
# mpirun: the loss per step, the predicted against the measured step time,
# and the trained weights checked against a single-process reference.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
example="${1:-examples/1f1b.mlir}"
workers=$(grep -oE 'workers = [0-9]+' "$example" | grep -oE '[0-9]+')
mpi=(--oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
# A model whose stages take milliseconds, so that compute, not per-op
# overhead, makes the step.
model=(--hidden 256 --batch 32 --layers-per-stage 2)

echo "== $example: simulated cost (pipeline-opt --sched-stats)"
build/bin/pipeline-opt --pipeline-schedule --sched-stats "$example" -o /dev/null
build/bin/pipeline-opt --pipeline-schedule "$example" | build/bin/pipeline-translate --sched-to-text

echo "== compile to per-rank programs (pipeline-compile)"
build/bin/pipeline-compile "$example" -o build/demo-program.json
echo "build/demo-program.json: $workers ranks, $(grep -c '"op"' build/demo-program.json) lines of ops"

echo "== measure this machine: mpirun -np $workers pipeline-run --profile"
mpirun "${mpi[@]}" -np "$workers" build/bin/pipeline-run build/demo-program.json \
  "${model[@]}" --steps 10 --profile build/demo-costs.json | grep '^profile:'

echo "== predict: compile again with the measured costs"
build/bin/pipeline-compile "$example" --lower-options="costs=build/demo-costs.json" \
  -o build/demo-program.json
build/bin/pipeline-opt --sched-calibrate=costs=build/demo-costs.json --pipeline-schedule \
  --sched-stats "$example" -o /dev/null | grep -E '^(latency|predicted step time)'

echo "== train on the CPU backend: mpirun -np $workers pipeline-run --verify"
cores=$(nproc)
if [ "$workers" -gt "$cores" ]; then
  echo "note: $workers ranks on $cores cores share them, which the prediction does not" \
    "model (it gives every rank its own processor): expect the measured time above it"
fi
mpirun "${mpi[@]}" -np "$workers" build/bin/pipeline-run build/demo-program.json \
  "${model[@]}" --steps 20 --optimizer adam --verify
