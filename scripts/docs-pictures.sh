#!/usr/bin/env bash
# Regenerates the pictures of docs/ (docs/tutorial.md, the README): the SVG
# diagrams of GPipe, 1F1B, interleaved 1F1B and a looped pipeline, and the
# HTML page that compares them. test/docs/pictures.test checks that the
# committed pictures are what this script makes.
#
#   scripts/docs-pictures.sh [BIN_DIR [OUT_DIR]]   (default build/bin docs/images)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build/bin}"
out="${2:-docs/images}"
mkdir -p "$out"
schemes=(gpipe 1f1b interleaved_1f1b lpp)
for scheme in "${schemes[@]}"; do
  "$bin/pipeline-opt" --pipeline-schedule "examples/$scheme.mlir" |
    "$bin/pipeline-translate" --sched-to-svg -o "$out/$scheme.svg"
done
"$bin/pipeline-report" --title "GPipe, 1F1B, interleaved 1F1B and a looped pipeline" \
  $(printf "examples/%s.mlir " "${schemes[@]}") -o "$out/compare.html"
