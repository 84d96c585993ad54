#!/usr/bin/env bash
# How well does the calibrated simulator predict a real step? For every
# strategy: compile the spec, profile it (pipeline-run --profile: per-stage
# compute medians and the transfer fit on this machine), compile it again
# with those costs (--lower-options="costs=..."), run it, and read the line
# pipeline-run prints: predicted step time vs the measured median of the
# steps after the first. Two sets:
#  - "fits": every strategy on W = 2 ranks, one per core of this 2-core
#    machine: the simulator's model (a processor per worker) holds;
#  - "oversubscribed": the README's examples (W = 4 and 8 ranks on 2 cores).
# Each strategy is measured 3 times (errors: median [min, max]). Prints a
# Markdown table and writes build/bench/calibration.csv (one row per run).
#
#   bench/calibration.sh [--quick] [--csv FILE] [--set fits|oversubscribed]
#                        [--strategy NAME] [BIN_DIR]
#     --quick: two strategies, few steps, once (CI runs it so the bench
#     never rots; the times are not judged)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 csv=build/bench/calibration.csv only= strategy_only=
while [ $# -gt 0 ]; do
  case "$1" in
  --quick) quick=1 ;;
  --csv) csv="$2"; shift ;;
  --set) only="$2"; shift ;;
  --strategy) strategy_only="$2"; shift ;;
  *) break ;;
  esac
  shift
done
bin="${1:-build/bin}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$csv")"

mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
model=(--hidden 256 --batch 32 --layers-per-stage 2)
profile_steps=12 measure_steps=32 repeat=3
if [ "$quick" = 1 ]; then
  model=(--hidden 32 --batch 4)
  profile_steps=3 measure_steps=4 repeat=1
fi

# name|stages|microbatches|workers|strategy (split strategies get bwd_w)
fits=(
  "ddp|2|2|2|ddp" "fsdp|2|2|2|fsdp" "gpipe|2|8|2|gpipe" "1f1b|2|8|2|1f1b"
  "interleaved_1f1b|4|8|2|interleaved_1f1b<chunks = 2>"
  "looped_bfs|4|8|2|looped_bfs<chunks = 2>"
  "lpp|2|8|2|lpp<groups = 2, ring = 1>" "fslpp|2|8|2|fslpp<groups = 2, ring = 1>"
  "zb_h1|2|8|2|zb_h1" "zb_h2|2|8|2|zb_h2" "zbv|4|8|2|zbv"
  "v_half|4|8|2|v_half" "v_min|4|8|2|v_min" "dualpipev|4|8|2|dualpipev"
)
over=(
  "ddp|4|4|4|ddp" "fsdp|4|4|4|fsdp" "gpipe|4|8|4|gpipe" "1f1b|4|8|4|1f1b"
  "interleaved_1f1b|8|8|4|interleaved_1f1b<chunks = 2>"
  "lpp|4|8|8|lpp<groups = 2, ring = 4>" "zb_h1|4|8|4|zb_h1"
)
if [ "$quick" = 1 ]; then
  fits=("gpipe|2|4|2|gpipe" "zb_h1|2|4|2|zb_h1")
  over=()
fi

echo "set,strategy,stages,microbatches,workers,repetition,predicted_ms,measured_ms,error_percent,same_run_predicted_ms,same_run_error_percent" >"$csv"
echo "| set | strategy | S | B | W | measured ms | error | same-run error |"
echo "|---|---|---|---|---|---|---|---|"
# Predicted milliseconds of a spec under a cost file (--sched-stats=json).
predict() {
  "$bin/pipeline-opt" --sched-calibrate=costs="$2" --pipeline-schedule \
    --sched-stats=json "$1" -o /dev/null |
    python3 -c 'import json, sys; print("%.3f" % json.load(sys.stdin)["steps"][0]["predicted_ms"])'
}
# "median [min, max]" of signed percentages.
spread() {
  python3 -c 'import statistics, sys; v = [float(x) for x in sys.argv[1:]]; print("%+.1f%% [%+.1f, %+.1f]" % (statistics.median(v), min(v), max(v)))' "$@"
}
run_set() {
  local set="$1"
  shift
  local row name s b w strategy cost line same rep
  for row in "$@"; do
    IFS='|' read -r name s b w strategy <<<"$row"
    [ -z "$strategy_only" ] || [ "$name" = "$strategy_only" ] || continue
    cost="cost <fwd = 1, bwd = 2>"
    case "$strategy" in zb* | v_* | dualpipev) cost="cost <fwd = 1, bwd = 1, bwd_w = 1>" ;; esac
    echo "sched.step stages = $s, microbatches = $b, workers = $w strategy #sched.$strategy $cost {}" >"$work/$name.mlir"
    local errors=() same_errors=() measures=()
    for ((rep = 1; rep <= repeat; ++rep)); do
      # Run A profiles; run B runs the program calibrated with A's costs
      # (the prediction pipeline-run prints) and profiles itself too, so
      # that B's own costs predict B's step: the model's error without the
      # machine's drift between runs.
      "$bin/pipeline-compile" "$work/$name.mlir" -o "$work/$name.json"
      "${mpi[@]}" -np "$w" "$bin/pipeline-run" "$work/$name.json" "${model[@]}" \
        --steps "$profile_steps" --profile "$work/$name.a.json" >/dev/null
      "$bin/pipeline-compile" --lower-options="costs=$work/$name.a.json" \
        "$work/$name.mlir" -o "$work/$name.calibrated.json"
      line=$("${mpi[@]}" -np "$w" "$bin/pipeline-run" "$work/$name.calibrated.json" \
        "${model[@]}" --steps "$measure_steps" --profile "$work/$name.b.json" |
        grep '^predicted step time')
      # predicted step time P ms (...) vs measured M ms (...): error E%
      read -r predicted measured error < <(sed -E \
        's/^predicted step time ([0-9.]+) ms .* vs measured ([0-9.]+) ms .*: error ([-+0-9.]+)%$/\1 \2 \3/' <<<"$line")
      same=$(predict "$work/$name.mlir" "$work/$name.b.json")
      same_error=$(python3 -c "print('%+.1f' % (($same - $measured) / $measured * 100))")
      echo "$set,$name,$s,$b,$w,$rep,$predicted,$measured,$error,$same,$same_error" >>"$csv"
      errors+=("$error")
      same_errors+=("$same_error")
      measures+=("$measured")
    done
    echo "| $set | $name | $s | $b | $w | $(python3 -c 'import statistics, sys; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "${measures[@]}") | $(spread "${errors[@]}") | $(spread "${same_errors[@]}") |"
  done
}
[ -z "$only" ] || [ "$only" = fits ] && run_set fits "${fits[@]}"
[ -z "$only" ] || [ "$only" = oversubscribed ] && ((${#over[@]})) && run_set oversubscribed "${over[@]}"
echo "model: built-in MLP, ${model[*]}; profile $profile_steps steps, measure $measure_steps steps (median of steps 2..$measure_steps); errors: median [min, max] of $repeat repetitions; CSV: $csv"
