// Environment defaults the CUDA backend sets for the libraries it loads,
// never overriding what the user chose. CUDA-free: unit-tested on the CPU.
#pragma once

#include <functional>

namespace pipesched::runtime::cuda {

// Sets `name` to `value` unless the environment already gives it a
// non-empty value. True when it set it.
bool setEnvDefault(const char *name, const char *value);

// CUDA_MODULE_LOADING=EAGER unless the user chose a mode; call before the
// first CUDA call of the process (the driver reads it when it initializes).
// CUDA 13 loads modules lazily by default, at a kernel's (or a GEMM
// shape's) first launch, and that load can wait behind an NCCL kernel
// spinning on the other stream for a peer: a dead peer would turn into a
// hang that no deadline sees. True when it set it.
bool requestEagerModuleLoading();

// Whether eager loading is worth asking for: only where an NCCL kernel can
// spin for a peer, i.e. --backend cuda with NCCL (not --gpu-comm mpi) on
// two ranks or more. Elsewhere CUDA's lazy default stands: it loads less,
// starts sooner, and with nothing spinning on the GPU a load cannot wait.
bool eagerModuleLoadingMatters(bool cudaBackend, bool nccl, int worldSize);

// The world size as the launcher announces it to each process, readable
// before MPI_Init, where pipeline-run sets the environment (main.cpp): the
// first of OMPI_COMM_WORLD_SIZE (Open MPI's mpirun),
// PMI_SIZE (MPICH's and Intel MPI's Hydra) and SLURM_NTASKS (srun) that
// holds a positive integer, else 1 (without a launcher, MPI_Init makes a
// singleton). `getenv` reads the environment (std::getenv).
using GetEnv = std::function<const char *(const char *)>;
int launcherWorldSize(const GetEnv &getenv);

} // namespace pipesched::runtime::cuda
