// CUDA runtime errors as exceptions: pipeline-run's driver prints them with
// the rank and ends the job.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace pipesched::runtime::cuda {

inline void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

} // namespace pipesched::runtime::cuda
