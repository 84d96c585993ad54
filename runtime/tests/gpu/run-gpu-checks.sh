#!/usr/bin/env bash
# Equivalence checks of pipeline-run on the GPU (docs/gpu.md, "Checks"):
# every check trains with --verify and compares weights and losses with the
# CPU reference. The GPU kit's run (scripts/gpu-kit.sh run) calls it on the
# GPU machine, and with BACKEND=cpu in the CI test that proves the kit.
#
#   run-gpu-checks.sh PIPELINE_RUN          # the binary (or a build folder)
#
# Environment:
#   BACKEND        cuda (default) or cpu; cpu skips the CUDA-only checks
#   MPIRUN         default: mpirun --allow-run-as-root --oversubscribe --bind-to none
#   GPUS           default: counted with nvidia-smi (cpu: unused)
#   LOGS           the folder of each check's log (default: a new one in TMPDIR; kept)
#   RESULTS        a file to which each check appends a JSON line (scripts/gpu-kit/result.py)
#   CHECK_LIMIT    seconds one check may take (default 120); then it fails
#   DEADLINE       a time (seconds since the epoch) after which no check starts
#   PROGRAMS_EXTRA the kit's compiled programs (examples/, specs/, a per-rank
#                  CBOR layout); else compiled here with PIPELINE_COMPILE
#
# Tolerances (--verify's normwise relative error per parameter tensor): 1e-5
# for SGD, where cuBLAS's summation order changes a few ulps; 1e-4 with
# Adam, whose update divides by sqrt(v) and so magnifies those ulps on
# parameters with tiny gradients, and for 64 layers per stage, where they
# compound through depth. Each PASS line prints the error it saw; losses
# must agree to 1e-6. Exits 1 if a check failed, 2 if it cannot run.
set -u
run=${1:?usage: run-gpu-checks.sh PIPELINE_RUN}
[ -d "$run" ] && run="$run/bin/pipeline-run"
[ -x "$run" ] || { echo "run-gpu-checks: no $run"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
programs="$here/../programs"
backend=${BACKEND:-cuda}
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe --bind-to none}
limit=${CHECK_LIMIT:-120}
deadline=${DEADLINE:-0}
logs=${LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-checks.XXXXXX")}
mkdir -p "$logs"
if [ "$backend" = cuda ]; then
  gpus=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
else
  gpus=0
fi
passed=0 failed=0 skipped=0
echo "run-gpu-checks: $run, --backend $backend, $gpus GPU(s), logs in $logs"

# NCCL with a GPU per rank; else MPI through pinned host memory, since NCCL
# refuses two ranks of a communicator on one GPU (docs/runtime.md).
backend_options() { # RANKS
  [ "$backend" = cuda ] || { echo "--backend cpu"; return; }
  if [ "$1" -le "$gpus" ]; then echo "--backend cuda --gpu-comm nccl"; else echo "--backend cuda --gpu-comm mpi"; fi
}

result() { # NAME STATUS SECONDS DETAIL
  printf '%-4s %-30s %4ss  %s\n' "$2" "$1" "$3" "$4"
  case $2 in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
  [ -z "${RESULTS:-}" ] || python3 "$root/scripts/gpu-kit/result.py" "$RESULTS" check "$1" \
    status="$2" seconds="$3" backend="$backend" detail="$4"
}

# Whether the deadline leaves time for another check (else it is skipped).
in_time() { # NAME
  [ "$deadline" = 0 ] || [ "$(date +%s)" -lt "$deadline" ] && return 0
  result "$1" SKIP 0 "(the run's deadline has passed)"
  return 1
}

# A program of runtime/tests/programs by name, or of the kit's by path.
program_path() { case $1 in /*) echo "$1" ;; *) echo "$programs/$1.json" ;; esac; }

# check NAME RANKS PROGRAM TOLERANCE [OPTIONS...]: trains with --verify;
# passes when the run succeeds, both verdicts say OK and the losses agree
# to 1e-6. A later --gpu-comm among OPTIONS overrides the default.
check() {
  local name=$1 ranks=$2 program tolerance=$4 rc=0 start=$SECONDS
  program=$(program_path "$3")
  shift 4
  in_time "$name" || return 0
  local log="$logs/$name.log"
  # shellcheck disable=SC2046
  timeout -k 5 "$limit" $mpirun -np "$ranks" $wrap "$run" "$program" $(backend_options "$ranks") \
    --verify --tolerance "$tolerance" --timeout 60 "$@" >"$log" 2>&1 || rc=$?
  local weights losses took=$((SECONDS - start))
  weights=$(grep -o 'max normwise relative error [^ ]* over [0-9]* tensors' "$log" | awk '{print $5}')
  losses=$(grep -o 'verify: losses of .* max relative error [^:]*' "$log" | awk '{print $NF}')
  if [ "$rc" -eq 0 ] && grep -q '^verify: losses .*: OK$' "$log" &&
    grep -q '^verify: weights vs reference: .*: OK$' "$log" &&
    awk -v e="$losses" 'BEGIN { exit !(e + 0 <= 1e-6) }'; then
    result "$name" PASS "$took" "$(backend_options "$ranks"); weights max normwise error $weights (tolerance $tolerance), losses $losses"
  else
    result "$name" FAIL "$took" "status $rc$([ "$rc" = 124 ] && echo ": over the ${limit} s limit"); $log"
    tail -n 15 "$log" | sed 's/^/     | /'
  fi
}

# expect_failure NAME RANKS PATTERN ARGS...: the job must fail within 120 s
# and print PATTERN (grep -E).
expect_failure() {
  local name=$1 ranks=$2 pattern=$3 rc=0 start=$SECONDS
  shift 3
  in_time "$name" || return 0
  local log="$logs/$name.log"
  # shellcheck disable=SC2046
  timeout -k 5 120 $mpirun -np "$ranks" "$run" $(backend_options "$ranks") "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qE "$pattern" "$log"; then
    result "$name" PASS $((SECONDS - start)) "$(backend_options "$ranks") (status $rc)"
  else
    result "$name" FAIL $((SECONDS - start)) "status $rc; $log"
    tail -n 15 "$log" | sed 's/^/     | /'
  fi
}

# CUDA-only checks are skipped on the CPU backend.
cuda_only() { # NAME
  [ "$backend" = cuda ] && return 0
  result "$1" SKIP 0 "(--backend cuda only)"
  return 1
}

if [ "$backend" = cuda ] && [ "$gpus" -lt 1 ]; then
  echo "run-gpu-checks: no GPU visible; pipeline-run says:"
  $mpirun -np 1 "$run" "$programs/ddp-1.json" --backend cuda 2>&1 | grep pipeline-run
  exit 2
fi
wrap=
source "$here/checks.sh"
echo "run-gpu-checks: $passed passed, $failed failed, $skipped skipped (logs: $logs)"
[ "$failed" -eq 0 ]
