# The measurements of the kit's run (sourced by run.sh; docs/gpu.md,
# "Measurements"), each a JSON line of the results:
#  - sgemm_ceiling: cuBLAS SGEMM on the MLP's GEMM shapes (sgemm.py);
#  - mlp_flops: the MLP's achieved FLOP/s at hidden 4096, batch 1024, 16
#    layers per stage, one rank, no --verify, as a fraction of the ceiling;
#  - host_overhead: the step time per op of a model too small to compute;
#  - step_time: a program's measured step time, and the costs --profile
#    measured with it, for the calibrated compile's prediction (predict.py,
#    here when a compiler is at hand, else on the CPU machine afterwards).

# Seconds kept for the measurements when the checks run first.
measure_reserve=150
if [ "$backend" = cuda ]; then
  mlp_model=(--hidden 4096 --batch 1024 --layers-per-stage 16)
  predict_model=(--hidden 2048 --batch 512 --layers-per-stage 4)
else # sized for a CPU core: the same steps, in seconds
  mlp_model=(--hidden 256 --batch 64 --layers-per-stage 2)
  predict_model=(--hidden 256 --batch 32 --layers-per-stage 2)
fi
tiny_model=(--hidden 8 --batch 1 --layers-per-stage 1)

# train NAME RANKS PROGRAM OPTIONS...: a run with at most 90 s (and never
# past the run's end), its output in $work/measure-logs/NAME.log.
train() {
  local name=$1 ranks=$2 program=$3 left=$((end - $(date +%s)))
  shift 3
  mkdir -p "$work/measure-logs"
  [ "$left" -gt 5 ] || { echo "$name: no time left"; return 1; }
  timeout -k 5 $((left < 90 ? left : 90)) $mpirun -np "$ranks" "$run" \
    "$program" --backend "$backend" "$@" >"$work/measure-logs/$name.log" 2>&1
}

# The measured step time (ms) and ops per step of rank 0 in NAME's log.
step_ms() { sed -n 's/^measured step time \([0-9.]*\) ms.*/\1/p' "$work/measure-logs/$1.log" | head -n 1; }
ops_per_step() { sed -n 's/^rank 0: per step .*; \([0-9]*\) ops;.*/\1/p' "$work/measure-logs/$1.log" | head -n 1; }
program_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

measure_sgemm() {
  step "measure: cuBLAS SGEMM ceiling on the MLP's shapes (PyTorch, fp32, TF32 off)"
  [ "$backend" = cuda ] || { record measure sgemm_ceiling status=SKIP detail="--backend cpu"; return; }
  LD_LIBRARY_PATH=$system_ld_path timeout -k 5 90 python3 "$here/sgemm.py" "$results" \
    --hidden "${mlp_model[1]}" --batch "${mlp_model[3]}" 2>&1 ||
    record measure sgemm_ceiling status=FAIL
}

# FLOPs of a step: each job (stage, microbatch) runs L layers of three
# B x H x H GEMMs (forward, input and weight gradients), 2 FLOPs each.
measure_mlp() {
  step "measure: the MLP's FLOP/s (${mlp_model[*]}, one rank)"
  local program="$kit/programs/mlp-1.json" ms jobs flops ceiling
  train mlp 1 "$program" "${mlp_model[@]}" --steps 6 || { record measure mlp_flops status=FAIL; return; }
  ms=$(step_ms mlp)
  [ -n "$ms" ] || { record measure mlp_flops status=FAIL detail="no step time in the log"; return; }
  jobs=$(($(program_field "$program" stages) * $(program_field "$program" microbatches)))
  flops=$(python3 -c "print(6 * $jobs * ${mlp_model[5]} * ${mlp_model[3]} * ${mlp_model[1]}**2)")
  ceiling=$(python3 -c 'import json,sys; print(next((r["tflops"] for r in map(json.loads, open(sys.argv[1])) if r["name"] == "sgemm_ceiling" and "tflops" in r), 0))' "$results")
  python3 - "$here" "$results" "$ms" "$flops" "$ceiling" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from result import main as record
results, ms, flops, ceiling = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
tflops = flops / (ms / 1e3) / 1e12
fraction = f"{tflops / ceiling:.3f}" if ceiling else "none"
print(f"mlp: {ms:.3f} ms per step, {flops:.3e} FLOP: {tflops:.2f} TFLOP/s; ceiling {ceiling} TFLOP/s: fraction {fraction}")
record(["", results, "measure", "mlp_flops", f"step_ms={ms}", f"flop={flops:.0f}", f"tflops={tflops:.2f}",
        f"ceiling_tflops={ceiling}", f"fraction={fraction}"])
PY
}

measure_overhead() {
  step "measure: host overhead per op (${tiny_model[*]}, one rank)"
  train overhead 1 "$kit/programs/overhead-1.json" "${tiny_model[@]}" --steps 30 ||
    { record measure host_overhead status=FAIL; return; }
  local ms ops
  ms=$(step_ms overhead) ops=$(ops_per_step overhead)
  [ -n "$ms" ] && [ -n "$ops" ] ||
    { record measure host_overhead status=FAIL detail="no step time or op count in the log"; return; }
  local us
  us=$(python3 -c "print(f'{$ms * 1000 / $ops:.2f}')")
  echo "overhead: $ms ms per step of $ops ops: $us us per op"
  record measure host_overhead step_ms="$ms" ops="$ops" us_per_op="$us"
}

# step_time NAME RANKS: --profile's costs, then the program's step time.
measure_step_time() {
  local name=$1 ranks=$2 program="$kit/programs/$1.json"
  step "measure: $name's step time and costs (${predict_model[*]}, $ranks rank(s))"
  train "$name-profile" "$ranks" "$program" "${predict_model[@]}" --steps 10 \
    --profile "$out/costs-$name.json" && train "$name" "$ranks" "$program" "${predict_model[@]}" --steps 20 ||
    { record measure step_time program="$name" status=FAIL; return; }
  grep -h '^profile:\|^measured step time' "$work/measure-logs/$name-profile.log" "$work/measure-logs/$name.log"
  record measure step_time program="$name" ranks="$ranks" measured_ms="$(step_ms "$name")" \
    costs="costs-$name.json" model="${predict_model[*]}"
}

measure_all() {
  measure_sgemm
  measure_mlp
  measure_overhead
  measure_step_time predict-1 1
  measure_step_time predict-2 2
  local compile=${PIPELINE_OPT:-$root/build/bin/pipeline-opt}
  if [ -x "$compile" ]; then
    step "predict: the calibrated compile against the measured step times"
    PIPELINE_OPT=$compile python3 "$here/predict.py" "$out"
  else
    echo "(no pipeline-opt here: run scripts/gpu-kit.sh predict on this folder where one is)"
  fi
}
