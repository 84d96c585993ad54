// Errors of the CUDA backend as exceptions: pipeline-run's driver prints
// them with the rank and ends the job.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace pipesched::runtime::cuda {

inline void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A set-up step (communicators, the warm-up) that ran past --setup-timeout.
[[noreturn]] inline void setupTimedOut(const std::string &what, double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  throw std::runtime_error(what + " timed out after " + text + " s (--setup-timeout)");
}

} // namespace pipesched::runtime::cuda
