// The CUDA backend (--backend cuda): one GPU per rank, the built-in MLP on
// cuBLAS and small kernels, transfers and gradient collectives on NCCL.
// This header needs no CUDA headers: the driver includes it when the
// backend is built (PIPESCHED_RUNTIME_HAVE_CUDA). docs/runtime.md, Backends.
#pragma once

#include "backend.h"
#include "data.h"
#include "model.h"
#include "optimizer.h"
#include "program.h"

#include <mpi.h>

#include <memory>
#include <string>

namespace pipesched::runtime {

struct CudaBackendConfig {
  const Program *program;
  int rank;
  int device; // from selectCudaDevice
  DataSpec data;
  OptimizerConfig optimizer;
  ModelShape shape;
  double timeout; // seconds, every wait
};

// Collective over `world`: picks this rank's GPU (the node-local rank
// modulo the device count) and makes it current. Returns "" or the message
// to print (no usable device, more ranks on the node than devices).
std::string selectCudaDevice(MPI_Comm world, int &device);

// Collective over `world` (NCCL bootstrap). Throws std::runtime_error.
std::unique_ptr<Backend> makeCudaBackend(MPI_Comm world, const CudaBackendConfig &config);

} // namespace pipesched::runtime
