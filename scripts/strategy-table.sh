#!/usr/bin/env bash
# Prints the unit-cost table of docs/strategy-table.md: every named strategy
# at p = 4, m = 8 and p = 8, m = 16, simulated by pipesched. Unit costs: a
# stage's forward 1 and backward 2 (split: input half 1, weight half 1), so
# every scheme does the same work. Usage: scripts/strategy-table.sh [BIN]
# (BIN = the directory of pipeline-opt; default build/bin).
set -euo pipefail
bin=${1:-build/bin}

# name | strategy | stages (in p) | split backward | closed form of the latency
families=(
  "gpipe|#sched.gpipe|1|no|(m + p - 1)(F + B)"
  "1f1b|#sched.1f1b|1|no|(m + p - 1)(F + B)"
  "interleaved_1f1b v=2 (Megatron)|#sched.interleaved_1f1b<chunks = 2>|2|no|v m (F + B) + (p - 1)(F + B)"
  "interleaved_1f1b v=2 (torch rounds)|#sched.interleaved_1f1b<chunks = 2, group = torch>|2|no|v m (F + B) + (p - 1)(F + B)"
  "looped_bfs v=2|#sched.looped_bfs<chunks = 2>|2|no|-"
  "zb_h1|#sched.zb_h1|1|yes|m (F + B + W) + (p - 1)(F + B - W)"
  "zb_h1 v=2 (torch interleaved ZB)|#sched.zb_h1<chunks = 2>|2|yes|-"
  "zb_h2|#sched.zb_h2|1|yes|-"
  "zbv|#sched.zbv|2|yes|-"
  "v_half|#sched.v_half|2|yes|-"
  "v_min|#sched.v_min|2|yes|-"
  "dualpipev (F&B = F+B+W)|#sched.dualpipev|2|yes|-"
  "ddp|#sched.ddp|1|no|m S (F + B) / p"
  "fsdp|#sched.fsdp|1|no|m S (F + B) / p"
  "lpp G=2, R=p/2|#sched.lpp<groups = 2, ring = HALF>|1|no|-"
  "fslpp G=2, R=p/2|#sched.fslpp<groups = 2, ring = HALF>|1|no|-"
)

echo "| scheme | p | m | latency | closed form | bubble (ZB rate) | Megatron's idle/busy | peak live per rank |"
echo "|---|---|---|---|---|---|---|---|"
for shape in "4 8" "8 16"; do
  read -r p m <<<"$shape"
  for family in "${families[@]}"; do
    IFS='|' read -r name strategy chunks split form <<<"$family"
    strategy=${strategy//HALF/$((p / 2))}
    stages=$((p * chunks))
    cost="fwd = 1, bwd = 2"
    [[ $split == yes ]] && cost="fwd = 1, bwd = 1, bwd_w = 1"
    stats=$(echo "sched.step stages = $stages, microbatches = $m, workers = $p strategy $strategy cost <$cost> {}" |
      "$bin/pipeline-opt" --pipeline-schedule | "$bin/pipeline-opt" --sched-stats -o /dev/null)
    latency=$(sed -n 's/^latency: \([0-9]*\) ticks.*/\1/p' <<<"$stats")
    ideal=$(sed -n 's/^bubble: .*time (idle \/ (L\*W)), \([0-9.]*\) of ideal time.*/\1/p' <<<"$stats")
    rate=$(sed -n "s/^bubble rate (Zero Bubble's): \([0-9.]*\) of the makespan.*/\1/p" <<<"$stats")
    peaks=$(awk '/^ +[0-9]+ +[0-9]/ { printf "%s%s", sep, $9; sep = " " }' <<<"$stats")
    # The closed form at these unit costs (F = 1, B = 2, or F = B = W = 1).
    case $form in
      "(m + p - 1)(F + B)") expect=$(((m + p - 1) * 3)) ;;
      "v m (F + B) + (p - 1)(F + B)") expect=$((2 * m * 3 + (p - 1) * 3)) ;;
      "m (F + B + W) + (p - 1)(F + B - W)") expect=$((m * 3 + (p - 1) * 1)) ;;
      "m S (F + B) / p") expect=$((m * stages * 3 / p)) ;;
      *) expect="" ;;
    esac
    shown=$form
    [[ -n $expect ]] && shown="$form = $expect"
    echo "| $name | $p | $m | $latency | $shown | $rate | $ideal | $peaks |"
  done
done
