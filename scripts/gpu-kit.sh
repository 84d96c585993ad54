#!/usr/bin/env bash
# The GPU kit (docs/gpu.md): everything a lent GPU machine needs to turn one
# call into results, since it has no MPI, no package registry and no network.
#
#   scripts/gpu-kit.sh prepare [--kit DIR] [--from-build DIR] [--cpu-only-ok]
#       here: builds pipeline-run with the CUDA backend, downloads Debian's
#       Open MPI runtime, compiles the programs; prints the device command
#   scripts/gpu-kit.sh run [--kit DIR] [--backend cuda|cpu] [--deadline S] [--out DIR]
#                          [--smoke-only] [--build-here]
#       there: the checks and measurements, results under $OUT
#   scripts/gpu-kit.sh predict DIR
#       here: the calibrated compile's predictions for the step times that
#       a run measured (DIR: the files it wrote)
set -euo pipefail
# bash by name: the device's copy of the tree may not keep execute bits.
here="$(cd "$(dirname "$0")" && pwd)/gpu-kit"
case ${1:-} in
  prepare) shift; exec bash "$here/prepare.sh" "$@" ;;
  run) shift; exec bash "$here/run.sh" "$@" ;;
  predict) shift; exec python3 "$here/predict.py" "$@" ;;
  *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
