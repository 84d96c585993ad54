# The fallback when the carried pipeline-run will not load on the GPU
# machine (a glibc older than the CPU machine's, say): build it there
# (sourced by run.sh, --build-here; docs/gpu.md). The image has nvcc, CMake
# and ninja; the kit carries what else the runtime's build needs, as
# Debian packages: Open MPI's headers, nlohmann-json and zlib's header.

gpu_kit_dev_packages=(libopenmpi-dev nlohmann-json3-dev zlib1g-dev)

# build_here PREFIX: unpacks the kit's dev/ into PREFIX (where mpi_unpack
# put MPI), builds pipeline-run with the CUDA backend in $work/build, and
# points $run at it.
build_here() {
  local p=$1 deb zlib
  for deb in "$kit"/dev/*.deb; do dpkg -x "$deb" "$p" || return 1; done
  # zlib1g-dev's libz.so names Debian's absolute path: use the image's.
  zlib=$(ldconfig -p | sed -n 's/.*libz\.so\.1 (libc6,x86-64) => //p' | head -n 1)
  cmake -G Ninja -S "$root/runtime" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DPIPESCHED_RUNTIME_TESTS=OFF -DPIPESCHED_RUNTIME_CUDA=ON \
    -DMPI_C_COMPILER="$p/usr/bin/mpicc.openmpi" \
    -DMPI_C_HEADER_DIR="$p/usr/lib/x86_64-linux-gnu/openmpi/include" \
    -DMPI_C_LIB_NAMES=mpi -DMPI_mpi_LIBRARY="$p/usr/lib/x86_64-linux-gnu/libmpi.so.40" \
    -Dnlohmann_json_DIR="$p/usr/share/cmake/nlohmann_json" \
    -DZLIB_INCLUDE_DIR="$p/usr/include" -DZLIB_LIBRARY="$zlib" >"$work/build-here.log" 2>&1 &&
    cmake --build "$work/build" -j "$(nproc)" --target pipeline-run >>"$work/build-here.log" 2>&1 ||
    { tail -n 30 "$work/build-here.log"; record step build_here status=FAIL; return 1; }
  grep 'pipeline-run: CUDA backend' "$work/build-here.log"
  run="$work/build/bin/pipeline-run"
  record step build_here status=PASS
}
