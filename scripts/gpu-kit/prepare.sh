#!/usr/bin/env bash
# The CPU machine's half of the GPU kit (scripts/gpu-kit.sh prepare; docs/
# gpu.md): builds pipeline-run with the CUDA backend (runtime only, Release,
# in build-kit/), downloads Debian's Open MPI 4 runtime, compiles every
# program the checks and measurements run, and puts it all in one
# git-ignored folder that the device tool carries.
#
#   prepare.sh [--kit DIR] [--from-build DIR] [--cpu-only-ok]
#
# --from-build DIR takes DIR/bin/pipeline-run instead of building one (the
# tests use the build they have); --cpu-only-ok accepts one without the
# CUDA backend (only to test the kit's MPI on a machine without CUDA).
# pipeline-compile comes from PIPELINE_COMPILE, else build/, which
# scripts/setup.sh installs and builds first on a fresh clone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/gpu-kit"
source "$here/mpi.sh"
source "$here/build-here.sh"
kit="$root/gpu-kit" from_build="" cpu_only_ok=0
while [ $# -gt 0 ]; do
  case $1 in
    --kit) kit=$(realpath -m "$2"); shift 2 ;;
    --from-build) from_build=$(realpath "$2"); shift 2 ;;
    --cpu-only-ok) cpu_only_ok=1; shift ;;
    *) echo "prepare: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
compile=${PIPELINE_COMPILE:-$root/build/bin/pipeline-compile}
if [ ! -x "$compile" ] && [ -z "${PIPELINE_COMPILE:-}" ]; then
  "$root/scripts/setup.sh"
fi
[ -x "$compile" ] || { echo "prepare: no $compile" >&2; exit 2; }

# pipeline-run: a Release build of the runtime alone (no MLIR, no tests).
build_runtime() {
  local build="$root/build-kit"
  mkdir -p "$build"
  cmake -G Ninja -S "$root/runtime" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DPIPESCHED_RUNTIME_TESTS=OFF -DPIPESCHED_RUNTIME_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="${CUDACXX:-/usr/local/cuda/bin/nvcc}" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; return 1; }
  grep 'pipeline-run: CUDA backend' "$build/configure.log" >&2 || true
  cmake --build "$build" -j "${PIPESCHED_JOBS:-2}" --target pipeline-run >&2
  echo "$build/bin/pipeline-run"
}

# The CUDA backend is in when pipeline-run links the CUDA runtime.
check_backend() {
  if readelf -d "$1" | grep -q 'NEEDED.*libcudart'; then
    echo "prepare: $1 has the CUDA backend"
  elif [ "$cpu_only_ok" = 1 ]; then
    echo "prepare: $1 has no CUDA backend (--cpu-only-ok: a kit for the CPU tests only)"
  else
    echo "prepare: $1 has no CUDA backend (needs nvcc, cuBLAS and NCCL: see docs/gpu.md)" >&2
    return 1
  fi
}

apt_download() { # FOLDER PACKAGE
  local log status=0
  log=$(cd "$1" && apt-get download "$2" 2>&1) || status=$?
  grep -v '^W: Download is performed unsandboxed' <<<"$log" || true
  return "$status"
}
apt_update() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q >/dev/null
}

# download FOLDER PACKAGE...: Debian's packages into the kit's FOLDER, kept
# in .cache/ so that a second prepare downloads none.
download() {
  local cache="$root/.cache/gpu-kit-debs" dest="$kit/$1" p
  shift
  mkdir -p "$cache" "$dest"
  for p in "$@"; do
    ls "$cache/${p}_"*.deb >/dev/null 2>&1 && continue
    # A machine whose packages came preinstalled may have no package lists.
    apt_download "$cache" "$p" || { apt_update && apt_download "$cache" "$p"; } ||
      { echo "prepare: apt-get download $p failed" >&2; return 1; }
  done
  for p in "$@"; do
    cp "$cache/${p}_"*.deb "$dest/"
  done
}

# compile_spec SPEC OUT [OPTIONS...]
compile_spec() {
  "$compile" "$1" -o "$2" "${@:3}" || { echo "prepare: pipeline-compile $1 failed" >&2; return 1; }
}

# Every program the checks and measurements run beyond runtime/tests/programs.
compile_programs() {
  local out="$kit/programs" ex spec
  mkdir -p "$out"
  for ex in 1f1b interleaved_1f1b fsdp ddp fslpp lpp; do
    compile_spec "$root/examples/$ex.mlir" "$out/$ex.json"
  done
  for spec in "$root"/runtime/tests/gpu/specs/*.mlir; do
    compile_spec "$spec" "$out/$(basename "$spec" .mlir).json"
  done
  compile_spec "$root/examples/1f1b.mlir" "$out/1f1b-cbor" --layout per-rank --encoding cbor
}

# What the kit holds, for the device's log and the results.
write_manifest() {
  local commit
  commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
  python3 - "$kit" "$commit" "${gpu_kit_mpi_packages[*]}" <<'PY'
import datetime, json, os, sys
kit, commit, packages = sys.argv[1:]
files = sorted(os.path.relpath(os.path.join(d, f), kit)
               for d, _, fs in os.walk(kit) for f in fs)
json.dump({"commit": commit, "made": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
           "mpi_packages": packages.split(), "files": files},
          open(os.path.join(kit, "manifest.json"), "w"), indent=1)
PY
}

main() {
  rm -rf "$kit" && mkdir -p "$kit/bin"
  local run
  if [ -n "$from_build" ]; then run="$from_build/bin/pipeline-run"; else run=$(build_runtime | tail -n 1); fi
  [ -x "$run" ] || { echo "prepare: no pipeline-run at $run" >&2; exit 1; }
  check_backend "$run"
  cp "$run" "$kit/bin/pipeline-run"
  strip "$kit/bin/pipeline-run" 2>/dev/null || true
  download mpi "${gpu_kit_mpi_packages[@]}"
  download dev "${gpu_kit_dev_packages[@]}"
  compile_programs
  write_manifest
  local bytes
  bytes=$(du -sb "$kit" | cut -f1)
  echo "prepare: kit $kit: $(find "$kit" -type f | wc -l) files, $((bytes / 1024)) KiB" \
    "(MPI's packages $(du -sb "$kit/mpi" | cut -f1) bytes, the build's $(du -sb "$kit/dev" | cut -f1))"
  if [ "$bytes" -gt $((20 * 1024 * 1024)) ]; then
    echo "prepare: the kit is over its 20 MiB target" >&2
    exit 1
  fi
  echo "prepare: on the GPU machine (the device tool's run, from the repository's root):"
  echo "  command: bash scripts/gpu-kit.sh run --kit $(realpath --relative-to="$root" "$kit")"
  echo "  carry: [\"$(realpath --relative-to="$root" "$kit")\"]   timeout_s: 480"
}
main
