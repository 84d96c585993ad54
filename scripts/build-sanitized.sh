#!/usr/bin/env bash
# Configures and builds the instrumented build of pipesched in build-asan/:
# clang-14 with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
# coverage, one build that serves both scripts/sanitize.sh (the lit suites on
# it) and scripts/fuzz.sh (the libFuzzer targets of fuzz/), so that CI
# compiles pipesched twice, not three times.
#
#   scripts/build-sanitized.sh [TARGET...]     (default: everything)
#
# The flags (scripts/sanitize.cmake, injected after project() so that no
# CMakeLists.txt needs an option for them): -fsanitize=address,undefined
# -fno-sanitize-recover=all -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,
# -O1 -gline-tables-only (every stack trace keeps its file:line; full -g
# makes the cold build half as long again: PIPESCHED_SANITIZE_DEBUG=-g), and
# no NDEBUG: pipesched has no assert() of its own, but the inline LLVM/MLIR
# code it instantiates then checks its casts and indices. The CUDA backend is
# off (nvcc and host sanitizers do not mix). ccache and PIPESCHED_JOBS
# (default 2) as in setup.sh. Installs clang-14 and its sanitizer and fuzzer
# runtimes when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build-asan

./scripts/install-packages.sh \
  cmake ninja-build python3 clang-14 libclang-rt-14-dev \
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools \
  libgtest-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin

debug="${PIPESCHED_SANITIZE_DEBUG:--gline-tables-only}"
launcher=()
command -v ccache >/dev/null &&
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
start=$SECONDS
# Configured every run (cheap), so that the flags here always hold.
cmake -G Ninja -S . -B "$build" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_C_FLAGS_SANITIZE="-O1 $debug" -DCMAKE_CXX_FLAGS_SANITIZE="-O1 $debug" \
  -DCMAKE_PROJECT_pipesched_INCLUDE="$root/scripts/sanitize.cmake" \
  -DPIPESCHED_ENABLE_FUZZERS=ON -DPIPESCHED_RUNTIME_CUDA=OFF \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  "${launcher[@]}" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
mv "$build.configure.log" "$build/configure.log"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "${PIPESCHED_JOBS:-2}" "${targets[@]}"
# A sanitizer suite that silently ran uninstrumented code would prove
# nothing: every translation unit must carry the flags.
python3 - "$build/compile_commands.json" <<'EOF'
import json, sys
units = json.load(open(sys.argv[1]))
bare = [u["file"] for u in units
        if "-fsanitize=address,undefined" not in u["command"]]
if bare or not units:
    sys.exit("build-sanitized: not instrumented: " + ", ".join(bare[:5]))
EOF
echo "[sanitize] configured and built in $((SECONDS - start)) s"
