#!/usr/bin/env bash
# Sets up and builds pipesched, then runs the main job on an example:
# expand an example schedule spec and print the job graph.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
example="${1:-examples/gpipe.mlir}"
echo "== pipeline-opt --sched-expand $example"
build/bin/pipeline-opt --sched-expand "$example"
