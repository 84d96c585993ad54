#!/usr/bin/env bash
# The GPU machine's half of the kit (scripts/gpu-kit.sh run; docs/gpu.md):
# reports the machine, unpacks the kit's Open MPI into a private prefix,
# finds the CUDA libraries in the image, then a one-rank smoke run, the
# checks (runtime/tests/gpu/run-gpu-checks.sh) and the measurements
# (measure.sh), all under one deadline. Everything printed goes to
# OUT/gpu-kit.log, each result to a JSON line of OUT/gpu-results.jsonl, the
# checks' logs to OUT/check-logs.tar.gz.
#
#   run.sh [--kit DIR] [--backend cuda|cpu] [--deadline SECONDS] [--out DIR]
#          [--smoke-only] [--build-here]
#
# OUT: --out, else $OUT (the device tool's folder), else KIT/results.
# --backend cpu runs the same on the CPU backend (the CI test of the kit).
# --build-here builds pipeline-run on this machine instead of running the
# carried one (build-here.sh: when the carried one will not load).
# Exits 0 when everything passed, 1 when a check or the smoke run failed,
# 2 on bad arguments or a driver too old for the kit's CUDA, 3 when a
# library is missing (named).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/gpu-kit"
source "$here/mpi.sh"
source "$here/libs.sh"
kit="$root/gpu-kit" backend=cuda budget=420 out="" smoke_only=0 build=0 args=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --kit) kit=$(realpath "$2"); shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --deadline) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke-only) smoke_only=1; shift ;;
    --build-here) build=1; shift ;;
    *) echo "gpu-kit run: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case $backend in cuda | cpu) ;; *) echo "gpu-kit run: --backend is cuda or cpu" >&2; exit 2 ;; esac
[ -f "$kit/manifest.json" ] || { echo "gpu-kit run: no kit in $kit (scripts/gpu-kit.sh prepare)" >&2; exit 2; }
# One outer deadline: the whole run, whatever hangs, ends within the budget.
if [ -z "${GPU_KIT_UNDER_DEADLINE:-}" ]; then
  GPU_KIT_UNDER_DEADLINE=1 exec timeout -k 10 "$budget" bash "$0" "${args[@]}"
fi
out=$(realpath -m "${out:-${OUT:-$kit/results}}")
mkdir -p "$out"
results="$out/gpu-results.jsonl"
: >"$results"
exec > >(tee "$out/gpu-kit.log") 2>&1
tee_pid=$!
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-kit.XXXXXX")
end=$(($(date +%s) + budget - 15))
record() { python3 "$here/result.py" "$results" "$@"; }
step() { echo; echo "== $*"; }
source "$here/report.sh"
source "$here/measure.sh"
source "$here/build-here.sh"
run="$kit/bin/pipeline-run"
chmod +x "$run" 2>/dev/null

# The kit's Open MPI in a private prefix; the CUDA libraries found.
setup() {
  step "Open MPI from the kit ($(ls "$kit/mpi" | wc -l) packages) into $work/mpi"
  mpi_unpack "$kit/mpi" "$work/mpi" || { record step mpi status=FAIL; return 1; }
  system_ld_path=${LD_LIBRARY_PATH:-}
  mpi_env "$work/mpi"
  echo "$(orterun --version 2>&1 | head -n 1)"
  if [ "$build" = 1 ]; then
    step "build pipeline-run here (--build-here)"
    build_here "$work/mpi" || return 1
  fi
  step "libraries of pipeline-run"
  libs_resolve "$run"
  # shellcheck disable=SC2046
  if ! libs_check "$run" $(mpi_elf_files "$work/mpi"); then
    record step libraries status=FAIL
    return 3
  fi
  ldd "$run" | grep -E 'lib(nccl|cublas|cublasLt|cudart|mpi)\.so' | sed 's/ (0x[0-9a-f]*)$//'
  record step libraries status=PASS
  [ "$backend" = cpu ] || check_driver || return 2
  mpirun="orterun --allow-run-as-root --oversubscribe --bind-to none"
}

# One rank, one tiny program: whether anything can run at all.
smoke() {
  step "smoke: one rank, --backend $backend"
  local rc=0 start=$SECONDS
  timeout -k 5 90 $mpirun -np 1 "$run" "$root/runtime/tests/programs/ddp-1.json" \
    --backend "$backend" --verify --timeout 30 >"$work/smoke.log" 2>&1 || rc=$?
  cat "$work/smoke.log"
  local status=FAIL
  [ "$rc" = 0 ] && grep -q '^verify: weights vs reference: .*: OK$' "$work/smoke.log" && status=PASS
  record step smoke status=$status seconds=$((SECONDS - start)) exit=$rc
  [ "$status" = PASS ]
}

checks() {
  step "checks (each at most 120 s; none starts after $(date -u -d @"$1" +%T) UTC)"
  BACKEND=$backend MPIRUN=$mpirun LOGS="$work/check-logs" RESULTS="$results" DEADLINE=$1 \
    PROGRAMS_EXTRA="$kit/programs" bash "$root/runtime/tests/gpu/run-gpu-checks.sh" "$run"
}

main() {
  echo "gpu-kit run: kit $kit ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' "$kit/manifest.json")), --backend $backend, budget $budget s"
  report_machine
  setup || exit $?
  local status=0
  if ! smoke; then
    status=1
    echo "gpu-kit run: the smoke run failed: no checks"
  elif [ "$smoke_only" = 0 ]; then
    # The measurements keep their share of the budget (measure.sh).
    checks $((end - measure_reserve)) || status=1
  fi
  [ "$smoke_only" = 1 ] || measure_all
  tar -czf "$out/check-logs.tar.gz" -C "$work" . 2>/dev/null
  step "summary"
  python3 "$here/summarize.py" "$results"
  # The log is whole before the run ends: the device tool fetches it then.
  exec >&- 2>&-
  wait "$tee_pid"
  exit $status
}
main
