#!/usr/bin/env bash
# Installs what pipesched needs from Debian (only what is missing), then
# configures and builds it in build/. Idempotent and non-interactive.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ python3 ccache
  time # /usr/bin/time: the benchmarks' peak memory (bench/run, bench/*.sh)
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libgtest-dev libbenchmark-dev nlohmann-json3-dev
  zlib1g-dev # the CRC-32 of the per-rank program layout (runtime)
  libopenmpi-dev openmpi-bin
)
./scripts/install-packages.sh "${packages[@]}"

build_type="${PIPESCHED_BUILD_TYPE:-Release}"
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE="$build_type" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake --build build -j "${PIPESCHED_JOBS:-2}"
