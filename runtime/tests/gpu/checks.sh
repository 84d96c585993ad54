# The list of GPU checks, sourced by run-gpu-checks.sh (which defines check,
# expect_failure, cuda_only and result). Order: one rank first (the most
# likely to run in a short lease), then several ranks, then refusals.

# The kit's compiled programs, else compiled here (examples/, the specs of
# runtime/tests/gpu/specs/, 1F1B in the per-rank CBOR layout).
extra=${PROGRAMS_EXTRA:-}
if [ -z "$extra" ]; then
  extra="$logs/programs"
  compile=${PIPELINE_COMPILE:-$(dirname "$run")/pipeline-compile}
  mkdir -p "$extra"
  for spec in "$root"/examples/{1f1b,interleaved_1f1b,fsdp,ddp,fslpp,lpp}.mlir "$here"/specs/*.mlir; do
    [ -x "$compile" ] && "$compile" "$spec" -o "$extra/$(basename "$spec" .mlir).json" 2>>"$extra/errors"
  done
  [ -x "$compile" ] && "$compile" "$root/examples/1f1b.mlir" --layout per-rank --encoding cbor \
    -o "$extra/1f1b-cbor" 2>>"$extra/errors"
fi
# extra_check NAME RANKS FILE TOLERANCE [OPTIONS...]: a check of a kit program.
extra_check() {
  if [ -e "$extra/$3" ]; then
    check "$1" "$2" "$extra/$3" "$4" "${@:5}"
  else
    result "$1" FAIL 0 "no program $extra/$3 (pipeline-compile failed or absent)"
  fi
}

# One rank (dag-skip-1: fan-in and fan-out sums on the GPU).
check ddp-1 1 ddp-1 1e-5
check ddp-1-seed-2 1 ddp-1 1e-5 --seed 2
check ddp-1-deep 1 ddp-1 1e-5 --layers-per-stage 3 --hidden 128 --batch 16 --steps 4
check ddp-1-ce 1 ddp-1 1e-5 --loss ce
check ddp-1-adam-ce 1 ddp-1 1e-4 --optimizer adam --loss ce
check gpipe-1 1 gpipe-1 1e-5
check gpipe-1-wide 1 gpipe-1 1e-5 --hidden 512 --batch 32 --layers-per-stage 2
check gpipe-1-adam 1 gpipe-1 1e-4 --optimizer adam --steps 5
check dag-skip-1 1 dag-skip-1 1e-5
check dag-skip-1-adam-ce 1 dag-skip-1 1e-4 --optimizer adam --loss ce
check gpipe-1-timeline 1 gpipe-1 1e-5 --timeline "$logs/timeline.csv"
if [ -f "$logs/timeline.csv" ]; then
  rows=$(wc -l <"$logs/timeline.csv")
  if [ "$rows" -eq $((1 + 18 * 3)) ]; then
    result gpipe-1-timeline-rows PASS 0 "$rows lines: a header and 18 ops x 3 steps"
  else
    result gpipe-1-timeline-rows FAIL 0 "$rows lines in $logs/timeline.csv, not $((1 + 18 * 3))"
  fi
fi
# 64 layers per stage: ops queue more GPU commands than the backend's bound
# (command_ledger.h), so each waits for the queue to drain and runs alone.
check gpipe-1-64-layers 1 gpipe-1 1e-4 --layers-per-stage 64 --steps 2
# The start-up line names the module loading mode in effect.
if cuda_only module-loading-reported; then
  if grep -qE 'module loading (eager|lazy)' "$logs/ddp-1.log" 2>/dev/null; then
    result module-loading-reported PASS 0 "$(grep -o 'backend cuda: .*' "$logs/ddp-1.log")"
  else
    result module-loading-reported FAIL 0 "no 'module loading' in $logs/ddp-1.log"
  fi
fi

# Several ranks: NCCL with a GPU per rank, else --gpu-comm mpi.
check gpipe-2 2 gpipe-2 1e-5
cuda_only gpipe-2-mpi && check gpipe-2-mpi 2 gpipe-2 1e-5 --gpu-comm mpi
check gpipe-2-adam-ce 2 gpipe-2 1e-4 --optimizer adam --loss ce
check ddp-2 2 ddp-2 1e-5
check fsdp-2 2 fsdp-2 1e-5
check zb-2 2 zb-2 1e-5
# Tied weights: a tied_grad sums the copies' gradients (stages 0 and 3; a
# V-shaped placement where both are on one rank; two replicas).
check tied-1f1b-4 4 tied-1f1b-4 1e-4 --optimizer adam
check tied-zbv-4 4 tied-zbv-4 1e-4 --optimizer adam
check tied-ddp-2 2 tied-ddp-2 1e-4 --optimizer adam
# --trace and --profile: device times of the ops, the link measured; the
# files as the CPU tests check them.
check zb-2-trace-profile 2 zb-2 1e-5 --steps 4 --trace "$logs/trace.json" --profile "$logs/costs.json"
for what in "trace:check_trace.py $logs/trace.json $programs/zb-2.json 4" \
  "profile:check_profile.py $logs/costs.json 2 2 --split"; do
  start=$SECONDS
  # shellcheck disable=SC2086
  if out=$(python3 "$here/../integration/"${what#*:} 2>&1); then
    result "zb-2-${what%%:*}-file" PASS $((SECONDS - start)) "$out"
  else
    result "zb-2-${what%%:*}-file" FAIL $((SECONDS - start)) "$out"
  fi
done
check interleaved-2 2 interleaved-2 1e-5 --layers-per-stage 2
check independent-2 2 independent-2 1e-5
check 1f1b-4 4 1f1b-4 1e-5
extra_check dualpipev-4 4 dualpipev-4.json 1e-5
extra_check 1f1b-4-per-rank-cbor 4 1f1b-cbor 1e-5
for dag in encoders-ddp:2 encoders-gpipe:3 encoders-1f1b:3 encoders-lpp:6 skip-ddp:2 \
  skip-1f1b:3 skip-lpp:4 skip-gpipe:6; do
  check "dag-${dag%%:*}" "${dag##*:}" "dag-${dag%%:*}" 1e-5
done
for spec in 1f1b:4 interleaved_1f1b:4 fsdp:4 ddp:4 fslpp:4 lpp:8; do
  extra_check "example-${spec%%:*}" "${spec##*:}" "${spec%%:*}.json" 1e-5
done
check ddp-8 8 ddp-8 1e-5
check gpipe-8 8 gpipe-8 1e-5
check 1f1b-8 8 1f1b-8 1e-5

# Device selection: two ranks on one GPU are refused under NCCL, naming
# both; with one GPU visible per rank (as Slurm's --gpus-per-task=1), each
# takes its own.
if cuda_only nccl-shared-gpu-refused; then
  CUDA_VISIBLE_DEVICES=0 expect_failure nccl-shared-gpu-refused 2 \
    '^pipeline-run: --backend cuda: ranks 0 and 1 would share CUDA device GPU-' \
    "$programs/gpipe-2.json" --gpu-comm nccl
fi
if [ "$backend" = cuda ] && [ "$gpus" -ge 2 ]; then
  wrap="$logs/own-gpu.sh"
  printf '%s\n' '#!/bin/sh' \
    'export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-0}}' \
    'exec "$@"' >"$wrap"
  chmod +x "$wrap"
  check gpipe-2-own-gpu 2 gpipe-2 1e-5
  wrap=
else
  result gpipe-2-own-gpu SKIP 0 "(needs 2 GPUs)"
fi

# A deadlock is refused on load; a dead peer ends in a timeout (Open MPI 4:
# orte_abort_on_non_zero_status 0 keeps the other rank running); an
# injected failure ends the job, naming the rank.
expect_failure deadlock-2-refused 2 'the rank programs deadlock: rank 0 waits in ranks\[0\]\.ops\[0\]' \
  "$programs/deadlock-2.json" --timeout 2
mpirun_saved=$mpirun
mpirun="$mpirun --mca orte_abort_on_non_zero_status 0"
expect_failure gpipe-2-dead-peer-timeout 2 'rank 0 timed out after 2.0 s in op [0-9]+ \(' \
  "$programs/gpipe-2.json" --fail-rank 1 --fail-at-op 2 --timeout 2
mpirun=$mpirun_saved
expect_failure gpipe-2-fail-rank 2 'rank 1: injected failure before op 2' \
  "$programs/gpipe-2.json" --fail-rank 1 --fail-at-op 2
