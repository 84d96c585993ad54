#!/usr/bin/env bash
# Equivalence checks of pipeline-run --backend cuda on a machine with GPUs
# (docs/runtime.md, Backends): every run trains on the GPU(s) and --verify
# compares weights and losses with the CPU reference. One GPU: the 1-rank
# programs (DDP W = 1, GPipe S = 2 on W = 1) under several model and
# optimizer settings, and a DAG (a skip connection) on one GPU. With more
# GPUs, the multi-rank test programs that fit (one GPU per rank: NCCL puts
# no two ranks of a communicator on one device), the DAG programs, a
# deadlock refused on load, a dead peer that must end in a timeout, and an
# injected failure.
#
# Tolerances (relative error |gpu - ref| / (|ref| + 1e-6) per parameter):
# 1e-5 for MSE + SGD; cuBLAS sums in another order (and with FMA) than the
# CPU kernels, and the 1e-6 floor makes near-zero parameters amplify that
# rounding: 1e-4 with cross-entropy (small biases), 1e-2 with Adam
# (parameters crossing zero; the CPU itself needs that much for DDP with
# Adam). The losses must agree to 1e-6 in every check.
#
#   run-gpu-checks.sh <build-dir>        # the build that has bin/pipeline-run
#
# Environment: MPIRUN (default: mpirun --allow-run-as-root --oversubscribe),
# GPUS (default: counted with nvidia-smi), KEEP=1 keeps the logs,
# PIPELINE_COMPILE (default: <build-dir>/bin/pipeline-compile; when it
# exists, the compiler's programs for examples/ run too: their LPP and
# FSLPP reduce over groups smaller than the world).
# Prints one line per check and a summary; exits 1 if any check failed.
set -u
build=${1:?usage: run-gpu-checks.sh <build-dir>}
run="$build/bin/pipeline-run"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
programs="$here/../programs"
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
[ -x "$run" ] || { echo "no $run"; exit 2; }
gpus=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
logs=$(mktemp -d "${TMPDIR:-/tmp}/gpu-checks.XXXXXX")

echo "pipeline-run: $run"
echo "GPUs: $gpus $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')"
passed=0 failed=0 skipped=0

result() { # name status detail
  printf '%-4s %-44s %s\n' "$2" "$1" "$3"
  case $2 in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
}

# check NAME RANKS PROGRAM TOLERANCE [OPTIONS...]: trains with --verify;
# passes when the run succeeds, both verdicts say OK and the losses agree
# to 1e-6.
check() {
  local name=$1 ranks=$2 program=$3 tolerance=$4
  shift 4
  if [ "$ranks" -gt "$gpus" ]; then
    result "$name" SKIP "(needs $ranks GPUs)"
    return
  fi
  local log="$logs/$name.log" rc=0
  case $program in /*) ;; *) program="$programs/$program.json" ;; esac
  timeout 600 $mpirun -np "$ranks" "$run" "$program" --backend cuda \
    --verify --tolerance "$tolerance" --timeout 60 "$@" >"$log" 2>&1 || rc=$?
  local weights losses
  weights=$(grep -o 'verify: max relative error [^ ]* over [0-9]* parameters' "$log" | awk '{print $5}')
  losses=$(grep -o 'verify: losses of .* max relative error [^:]*' "$log" | awk '{print $NF}')
  if [ "$rc" -eq 0 ] && grep -q '^verify: losses .*: OK$' "$log" &&
    grep -q '^verify: max relative error .*: OK$' "$log" &&
    awk -v e="$losses" 'BEGIN { exit !(e + 0 <= 1e-6) }'; then
    result "$name" PASS "weights max rel. error $weights (tolerance $tolerance), losses $losses"
  else
    result "$name" FAIL "(status $rc; $log)"
    tail -n 15 "$log" | sed 's/^/     | /'
  fi
}

# expect_failure NAME RANKS PATTERN COMMAND...: the job must fail within the
# limit and print PATTERN (grep -E).
expect_failure() {
  local name=$1 ranks=$2 pattern=$3
  shift 3
  if [ "$ranks" -gt "$gpus" ]; then
    result "$name" SKIP "(needs $ranks GPUs)"
    return
  fi
  local log="$logs/$name.log" rc=0 start=$SECONDS
  timeout 120 $mpirun -np "$ranks" "$run" "$@" --backend cuda >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qE "$pattern" "$log"; then
    result "$name" PASS "(status $rc after $((SECONDS - start)) s)"
  else
    result "$name" FAIL "(status $rc; $log)"
    tail -n 15 "$log" | sed 's/^/     | /'
  fi
}

if [ "$gpus" -lt 1 ]; then
  echo "no GPU visible; pipeline-run says:"
  $mpirun -np 1 "$run" "$programs/ddp-1.json" --backend cuda 2>&1 | grep pipeline-run
  exit 1
fi

# One GPU: W = 1 programs (dag-skip-1: fan-in and fan-out sums on the GPU).
check ddp-1 1 ddp-1 1e-5
check ddp-1-seed-2 1 ddp-1 1e-5 --seed 2
check ddp-1-deep 1 ddp-1 1e-5 --layers-per-stage 3 --hidden 128 --batch 16 --steps 4
check ddp-1-ce 1 ddp-1 1e-4 --loss ce
check ddp-1-adam-ce 1 ddp-1 1e-2 --optimizer adam --loss ce
check gpipe-1 1 gpipe-1 1e-5
check gpipe-1-wide 1 gpipe-1 1e-5 --hidden 512 --batch 32 --layers-per-stage 2
check gpipe-1-adam 1 gpipe-1 1e-2 --optimizer adam --steps 5
check dag-skip-1 1 dag-skip-1 1e-5
check dag-skip-1-adam-ce 1 dag-skip-1 1e-2 --optimizer adam --loss ce
check gpipe-1-timeline 1 gpipe-1 1e-5 --timeline "$logs/timeline.csv"
if [ -f "$logs/timeline.csv" ] && [ "$(wc -l <"$logs/timeline.csv")" -ne $((1 + 18 * 3)) ]; then
  result gpipe-1-timeline-rows FAIL "($(wc -l <"$logs/timeline.csv") lines in $logs/timeline.csv)"
fi

# Several GPUs: the multi-rank programs, one GPU per rank.
check gpipe-2 2 gpipe-2 1e-5
check gpipe-2-adam-ce 2 gpipe-2 1e-2 --optimizer adam --loss ce
check ddp-2 2 ddp-2 1e-5
check fsdp-2 2 fsdp-2 1e-5
check zb-2 2 zb-2 1e-5
check interleaved-2 2 interleaved-2 1e-5 --layers-per-stage 2
check 1f1b-4 4 1f1b-4 1e-5
check ddp-8 8 ddp-8 1e-5
check gpipe-8 8 gpipe-8 1e-5
check 1f1b-8 8 1f1b-8 1e-5
check independent-2 2 independent-2 1e-5
check dag-encoders-ddp 2 dag-encoders-ddp 1e-5
check dag-encoders-gpipe 3 dag-encoders-gpipe 1e-5
check dag-encoders-1f1b 3 dag-encoders-1f1b 1e-5
check dag-encoders-lpp 6 dag-encoders-lpp 1e-5
check dag-skip-ddp 2 dag-skip-ddp 1e-5
check dag-skip-1f1b 3 dag-skip-1f1b 1e-5
check dag-skip-lpp 4 dag-skip-lpp 1e-5
check dag-skip-gpipe 6 dag-skip-gpipe 1e-5
# The compiler's programs (examples/*.mlir), when pipeline-compile is there.
compile=${PIPELINE_COMPILE:-$build/bin/pipeline-compile}
examples="$here/../../../examples"
if [ -x "$compile" ]; then
  for spec in 1f1b:4 interleaved_1f1b:4 fsdp:4 ddp:4 fslpp:4 lpp:8; do
    ex=${spec%%:*}
    if "$compile" "$examples/$ex.mlir" -o "$logs/$ex.json" 2>"$logs/$ex.err"; then
      check "example-$ex" "${spec##*:}" "$logs/$ex.json" 1e-5
    else
      result "example-$ex" FAIL "(pipeline-compile failed: $logs/$ex.err)"
    fi
  done
else
  result examples SKIP "(no $compile)"
fi

# A deadlock is refused on load; a dead peer ends in a timeout (Open MPI 4:
# orte_abort_on_non_zero_status 0 keeps the other rank running).
expect_failure deadlock-2-refused 2 'the rank programs deadlock: rank 0 waits in ranks\[0\]\.ops\[0\]' \
  "$programs/deadlock-2.json" --timeout 2
mpirun_saved=$mpirun
mpirun="$mpirun --mca orte_abort_on_non_zero_status 0"
expect_failure gpipe-2-dead-peer-timeout 2 'rank 0 timed out after 2.0 s in op [0-9]+ \(' \
  "$programs/gpipe-2.json" --fail-rank 1 --fail-at-op 2 --timeout 2
mpirun=$mpirun_saved
expect_failure gpipe-2-fail-rank 2 'rank 1: injected failure before op 2' \
  "$programs/gpipe-2.json" --fail-rank 1 --fail-at-op 2

echo "GPU checks: $passed passed, $failed failed, $skipped skipped (logs: $logs)"
[ "${KEEP:-0}" = 1 ] || [ "$failed" -ne 0 ] || rm -rf "$logs"
[ "$failed" -eq 0 ]
