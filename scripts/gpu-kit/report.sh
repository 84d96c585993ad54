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
  command -v nvcc >/dev/null 2>&1 && echo "cuda_toolkit=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
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

# The oldest driver each CUDA major version runs on (NVIDIA's release notes,
# minor version compatibility): refuse early rather than fail every check.
check_driver() {
  local cuda driver need
  cuda=$(ldd "$run" | sed -n 's/.*libcudart\.so\.\([0-9][0-9]*\) =>.*/\1/p' | head -n 1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
  case $cuda in 13) need=580 ;; 12) need=525 ;; *) need= ;; esac
  [ -n "$need" ] && [ -n "$driver" ] && [ "${driver%%.*}" -lt "$need" ] || return 0
  echo "gpu-kit: the NVIDIA driver $driver is older than CUDA $cuda needs (>= $need):" \
    "build the kit with a CUDA toolkit this driver supports"
  record step driver status=FAIL driver="$driver" cuda="$cuda"
  return 2
}
