# The Open MPI that the GPU kit carries (sourced by prepare.sh and run.sh;
# docs/gpu.md, "What the kit does"). The GPU machine has no MPI and no
# package registry, so the kit brings Debian bookworm's Open MPI 4 runtime
# as .deb files and run.sh unpacks them into a private prefix.

# Open MPI's runtime and every library it loads beyond glibc, libstdc++ and
# zlib, which any Linux image has (PMIx links libmunge; hwloc, libudev).
gpu_kit_mpi_packages=(
  openmpi-bin openmpi-common libopenmpi3 libpmix2 libmunge2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libudev1
)

# Components for network stacks the kit does not carry (InfiniBand verbs,
# UCX, libfabric, PSM, netlink): Open MPI would try and fail to load each.
# Shared memory (vader) and TCP serve the ranks of one node.
gpu_kit_mpi_drop=(
  'mca_*_ofi.so' 'mca_*_openib.so' 'mca_*ucx.so' 'mca_*_psm.so' 'mca_*_psm2.so'
  'mca_reachable_netlink.so' 'libmca_common_ofi.so*' 'libmca_common_ucx.so*'
  'libmca_common_verbs.so*'
)

# mpi_unpack DEBS_DIR PREFIX: every .deb of DEBS_DIR into PREFIX (dpkg -x,
# nothing installed), less the dropped components.
mpi_unpack() {
  local debs=$1 prefix=$2 deb pattern
  mkdir -p "$prefix"
  for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$prefix" || return 1
  done
  for pattern in "${gpu_kit_mpi_drop[@]}"; do
    find "$prefix" -name "$pattern" -exec rm -f {} +
  done
}

# mpi_lib_dirs PREFIX: the folders of PREFIX's libraries, ':'-separated.
mpi_lib_dirs() {
  local p=$1
  echo "$p/usr/lib/x86_64-linux-gnu:$p/lib/x86_64-linux-gnu:$p/usr/lib/x86_64-linux-gnu/openmpi/lib:$p/usr/lib/x86_64-linux-gnu/pmix2/lib"
}

# mpi_env PREFIX: the environment that makes the unpacked Open MPI find
# itself. OPAL_PREFIX relocates Open MPI; PMIx, configured with absolute
# paths, needs each of its folders named, and its component path.
mpi_env() {
  local p=$1 pmix=$1/usr/lib/x86_64-linux-gnu/pmix2
  export OPAL_PREFIX=$p/usr
  export PMIX_PREFIX=$pmix PMIX_EXEC_PREFIX=$pmix PMIX_LIBDIR=$pmix/lib
  export PMIX_DATADIR=$pmix/share PMIX_PKGDATADIR=$pmix/share/pmix PMIX_SYSCONFDIR=$pmix/share
  export PMIX_MCA_mca_base_component_path=$pmix/lib/pmix
  export OMPI_MCA_btl_base_warn_component_unused=0
  # Shared memory without cross-memory attach (process_vm_readv), which
  # containers and VMs often refuse: a refusal would fail every multi-rank
  # check; copying through the segment costs a little bandwidth.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  export PATH=$p/usr/bin:$PATH
  export LD_LIBRARY_PATH=$(mpi_lib_dirs "$p")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# mpi_elf_files PREFIX: the programs and libraries of the unpacked MPI that
# a run loads (the compiler wrappers and Java/Fortran bindings aside).
mpi_elf_files() {
  local p=$1
  echo "$p/usr/bin/orterun" "$p/usr/bin/orted"
  find "$p/usr/lib" "$p/lib" -name '*.so*' -type f 2>/dev/null |
    grep -vE 'lib(mpi_java|mpi_mpifh|mpi_usempi_ignore_tkr|oshmem)\.so|/openmpi3/mca_(spml|sshmem|atomic|scoll|memheap)_'
}
