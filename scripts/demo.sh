#!/usr/bin/env bash
# Sets up and builds pipesched, then runs the main job on an example:
# expand, place and simulate an example schedule, print its statistics
# and the per-rank order.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
example="${1:-examples/1f1b.mlir}"
echo "== pipeline-opt --sched-expand --sched-place --sched-simulate --sched-stats $example"
build/bin/pipeline-opt --sched-expand --sched-place --sched-simulate --sched-stats "$example" -o build/demo.mlir
echo "== per-rank order (torch.distributed.pipelining CSV)"
build/bin/pipeline-translate --sched-to-torch-csv build/demo.mlir
