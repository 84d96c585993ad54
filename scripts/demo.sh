#!/usr/bin/env bash
# Sets up and builds pipesched, then runs the main job on an example:
# expand and place an example schedule spec and print the job graph.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
example="${1:-examples/lpp.mlir}"
echo "== pipeline-opt --sched-expand --sched-place $example"
build/bin/pipeline-opt --sched-expand --sched-place "$example"
