// What the CUDA backend runs on, for rank 0's start-up line.
#pragma once

#include <string>

namespace pipesched::runtime::cuda {

// "device 0 (NVIDIA H100 80GB HBM3, GPU-...; module loading eager)". The
// loading mode is the one CUDA applies, which may not be the one asked for
// (env_default.h) when something initialized CUDA before.
std::string describeDevice(int device);

} // namespace pipesched::runtime::cuda
