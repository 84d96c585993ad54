# What the kit runs on, printed and recorded (sourced by run.sh): the
# system, glibc, the GPUs, the driver, the CUDA it supports and the
# toolkit's, and PyTorch (whose cuBLAS gives the SGEMM ceiling).

# The machine's facts, one "key=value" per line.
machine_facts() {
  echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "kernel=$(uname -r)"
  echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
  echo "cores=$(nproc)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | sed 's/^ *//' | paste -sd ';')"
    echo "driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
    echo "cuda_driver=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | awk '{print $3}')"
  fi
  command -v nvcc >/dev/null 2>&1 && echo "cuda_toolkit=$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "torch=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
}

report_machine() {
  step "machine"
  local facts
  facts=$(machine_facts)
  echo "$facts"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi 2>&1
  # shellcheck disable=SC2046
  (IFS=$'\n'; record env machine backend="$backend" $facts)
}
