// Runs every kernel and every cuBLAS GEMM shape that a step uses once, on
// scratch memory, before step 1, and waits for them (once). With lazy
// module loading (CUDA 13's default; the backend asks for eager loading,
// env_default.h, but CUDA may have started before it could) the first
// launch of a kernel or shape loads its module, and that load can wait
// behind an NCCL kernel on the other stream that waits for a peer: a dead
// peer would become a hang that no deadline sees. After the warm-up, no
// launch of the steps loads anything.
#pragma once

#include "cuda/cuda_mlp.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace pipesched::runtime::cuda {

// The MLP's forward and backward (all three GEMMs, both betas), the loss
// and its gradient of both losses, add, SGD and Adam, the inputs' and both
// losses' targets' generators. stageParams: floats
// of one stage's parameters (the MLP's shape). Throws std::runtime_error on
// a CUDA error or when the GPU takes longer than `seconds`.
void warmUp(CudaMlp &mlp, int64_t rows, int64_t hidden, size_t stageParams,
            cudaStream_t stream, double seconds);

} // namespace pipesched::runtime::cuda
