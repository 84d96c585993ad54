#!/usr/bin/env bash
# Equivalence checks of pipeline-run --backend cuda on a machine with GPUs
# (docs/runtime.md, Backends): every run trains on the GPU(s) and --verify
# compares weights and losses with the CPU reference. One GPU: the 1-rank
# programs (DDP W = 1, GPipe S = 2 on W = 1) under several model and
# optimizer settings, and a DAG (a skip connection). The multi-rank test
# programs, the DAG programs, a deadlock refused on load, a dead peer that
# must end in a timeout and an injected failure run with NCCL when there is
# a GPU per rank, else with --gpu-comm mpi (several ranks per GPU; NCCL
# refuses two ranks of a communicator on one device). Also: two ranks on one
# GPU refused under NCCL by name, one visible GPU per rank
# (CUDA_VISIBLE_DEVICES per rank) accepted, eager module loading in effect,
# and the files of --trace and --profile.
#
# Tolerances (--verify's normwise relative error ||gpu - ref|| / ||ref|| per
# parameter tensor, docs/runtime.md, Verification): 1e-5 for SGD, where
# cuBLAS's summation order and FMA change a few ulps; 1e-4 with Adam, whose
# update divides by sqrt(v) and so magnifies those ulps on parameters with
# tiny gradients, and for 64 layers per stage, where they compound through
# depth. Both are guesses until measured on a GPU: each PASS line prints
# the error it saw. The losses must agree to 1e-6 in every check.
#
#   run-gpu-checks.sh <build-dir>        # the build that has bin/pipeline-run
#
# Environment: MPIRUN (default: mpirun --allow-run-as-root --oversubscribe),
# GPUS (default: counted with nvidia-smi), KEEP=1 keeps the logs,
# PIPELINE_COMPILE (default: <build-dir>/bin/pipeline-compile; when it
# exists, the compiler's programs for examples/ run too: their LPP and
# FSLPP reduce over groups smaller than the world).
# Prints what it runs on, one line per check and a summary; exits 1 if any
# check failed, 2 if it cannot run (no pipeline-run, a driver too old).
set -u
build=${1:?usage: run-gpu-checks.sh <build-dir>}
run="$build/bin/pipeline-run"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
programs="$here/../programs"
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
[ -x "$run" ] || { echo "no $run"; exit 2; }
gpus=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
logs=$(mktemp -d "${TMPDIR:-/tmp}/gpu-checks.XXXXXX")

# What the checks run on, for the log: the GPUs, the driver, the CUDA that
# pipeline-run was built with, and where its libraries and MPI come from.
echo "== nvidia-smi"
nvidia-smi 2>&1 || echo "(nvidia-smi failed)"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
cuda=$(ldd "$run" | sed -n 's/.*libcudart\.so\.\([0-9][0-9]*\).*/\1/p' | head -n 1)
toolkit=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")$/\1/p' "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | head -n 1)
echo "== versions"
echo "driver: ${driver:-unknown}; CUDA runtime of pipeline-run: ${cuda:-none} (toolkit ${toolkit:-unknown})"
echo "== libraries of pipeline-run"
ldd "$run" | grep -E 'lib(nccl|cublas|cublasLt|cudart|mpi)\.so' | sed 's/ (0x[0-9a-f]*)$//; s/^[[:space:]]*/  /'
echo "== MPI"
echo "  $(command -v ${mpirun%% *}): $(${mpirun%% *} --version 2>&1 | head -n 1)"
echo "pipeline-run: $run"
echo "GPUs: $gpus $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')"

# The oldest driver each CUDA major version runs on (NVIDIA's release notes,
# minor version compatibility): refuse early rather than fail every check.
case $cuda in 13) need=580 ;; 12) need=525 ;; 11) need=450 ;; *) need= ;; esac
if [ -n "$need" ] && [ -n "$driver" ] && [ "${driver%%.*}" -lt "$need" ]; then
  echo "the NVIDIA driver $driver is older than CUDA $cuda needs (>= $need): update the driver," \
    "or build pipeline-run with a CUDA toolkit this driver supports"
  exit 2
fi
passed=0 failed=0 skipped=0

# NCCL with a GPU per rank; else MPI through pinned host memory, since NCCL
# refuses two ranks of a communicator on one GPU (docs/runtime.md).
gpu_comm() { if [ "$1" -le "$gpus" ]; then echo nccl; else echo mpi; fi; }
# Set by a check to run each rank through a wrapper (e.g. its own GPU).
wrap=

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
  local log="$logs/$name.log" rc=0 comm
  comm=$(gpu_comm "$ranks")
  case $program in /*) ;; *) program="$programs/$program.json" ;; esac
  # A later --gpu-comm among the check's options overrides this one.
  timeout 600 $mpirun -np "$ranks" $wrap "$run" "$program" --backend cuda --gpu-comm "$comm" \
    --verify --tolerance "$tolerance" --timeout 60 "$@" >"$log" 2>&1 || rc=$?
  local weights losses
  weights=$(grep -o 'max normwise relative error [^ ]* over [0-9]* tensors' "$log" | awk '{print $5}')
  losses=$(grep -o 'verify: losses of .* max relative error [^:]*' "$log" | awk '{print $NF}')
  if [ "$rc" -eq 0 ] && grep -q '^verify: losses .*: OK$' "$log" &&
    grep -q '^verify: weights vs reference: .*: OK$' "$log" &&
    awk -v e="$losses" 'BEGIN { exit !(e + 0 <= 1e-6) }'; then
    result "$name" PASS "$comm; weights max normwise error $weights (tolerance $tolerance), losses $losses"
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
  local log="$logs/$name.log" rc=0 start=$SECONDS comm
  comm=$(gpu_comm "$ranks")
  timeout 120 $mpirun -np "$ranks" "$run" --backend cuda --gpu-comm "$comm" "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qE "$pattern" "$log"; then
    result "$name" PASS "$comm (status $rc after $((SECONDS - start)) s)"
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

# Each rank sees only its own GPU (CUDA_VISIBLE_DEVICES per rank, as Slurm's
# --gpus-per-task=1 launches).
own_gpu="$logs/own-gpu.sh"
printf '%s\n' '#!/bin/sh' \
  'export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-0}}' \
  'exec "$@"' >"$own_gpu"
chmod +x "$own_gpu"

# One GPU: W = 1 programs (dag-skip-1: fan-in and fan-out sums on the GPU).
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
if [ -f "$logs/timeline.csv" ] && [ "$(wc -l <"$logs/timeline.csv")" -ne $((1 + 18 * 3)) ]; then
  result gpipe-1-timeline-rows FAIL "($(wc -l <"$logs/timeline.csv") lines in $logs/timeline.csv)"
fi
# 64 layers per stage: ops queue more GPU commands than the backend's bound
# (command_ledger.h), so each waits for the queue to drain and runs alone.
check gpipe-1-64-layers 1 gpipe-1 1e-4 --layers-per-stage 64 --steps 2
# The backend asks for eager module loading before CUDA starts.
if grep -q 'module loading eager' "$logs/ddp-1.log" 2>/dev/null; then
  result eager-module-loading PASS "($(grep -o 'backend cuda: .*' "$logs/ddp-1.log"))"
else
  result eager-module-loading FAIL "($(grep -o 'backend cuda: .*' "$logs/ddp-1.log" 2>/dev/null || echo "no start-up line in $logs/ddp-1.log"))"
fi

# Device selection: two ranks on one GPU are refused under NCCL, naming
# both; with one GPU visible per rank, each takes its own.
CUDA_VISIBLE_DEVICES=0 expect_failure nccl-shared-gpu-refused 2 \
  '^pipeline-run: --backend cuda: ranks 0 and 1 would share CUDA device GPU-' \
  "$programs/gpipe-2.json" --gpu-comm nccl
if [ "$gpus" -ge 2 ]; then
  wrap=$own_gpu
  check gpipe-2-own-gpu 2 gpipe-2 1e-5
  wrap=
else
  result gpipe-2-own-gpu SKIP "(needs 2 GPUs)"
fi

# The multi-rank programs: NCCL with a GPU per rank, else --gpu-comm mpi.
check gpipe-2-mpi 2 gpipe-2 1e-5 --gpu-comm mpi
check gpipe-2 2 gpipe-2 1e-5
check gpipe-2-adam-ce 2 gpipe-2 1e-4 --optimizer adam --loss ce
check ddp-2 2 ddp-2 1e-5
check fsdp-2 2 fsdp-2 1e-5
check zb-2 2 zb-2 1e-5
# --trace and --profile under cuda: device times of the ops, the ping-pong
# over MPI; the files as the CPU tests check them.
check zb-2-trace-profile 2 zb-2 1e-5 --steps 4 --trace "$logs/trace.json" --profile "$logs/costs.json"
for what in "trace:check_trace.py $logs/trace.json $programs/zb-2.json 4" \
  "profile:check_profile.py $logs/costs.json 2 2 --split"; do
  # shellcheck disable=SC2086
  if out=$(python3 "$here/../integration/"${what#*:} 2>&1); then
    result "zb-2-${what%%:*}-file" PASS "($out)"
  else
    result "zb-2-${what%%:*}-file" FAIL "($out)"
  fi
done
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
