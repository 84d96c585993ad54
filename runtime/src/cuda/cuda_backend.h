// The CUDA backend (--backend cuda): the built-in MLP on cuBLAS and small
// kernels, transfers and gradient collectives on NCCL (a GPU per rank) or,
// with --gpu-comm mpi, over MPI through pinned host memory (ranks may share
// a GPU).
// This header needs no CUDA headers: the driver includes it when the
// backend is built (PIPESCHED_RUNTIME_HAVE_CUDA). docs/runtime.md, Backends.
#pragma once

#include "cli/options.h"
#include "comm/transport.h"
#include "exec/backend.h"
#include "model/data.h"
#include "model/model.h"
#include "model/optimizer.h"
#include "program/program.h"

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
  double timeout;      // seconds, every wait of the steps
  double setupTimeout; // seconds, NCCL's set-up and tear-down, the warm-up
  GpuComm comm;
  Transport *transport; // MPI: --gpu-comm mpi's transfers and collectives
};

// Collective over `world`: asks for eager module loading where it matters
// (NCCL on two ranks or more, env_default.h) unless the user chose a mode,
// picks this rank's GPU among those it sees (the node-local
// rank modulo their number) and makes it current. The ranks of a node
// compare their devices' UUIDs: two on one GPU are refused unless
// `shareDevices` (--gpu-comm mpi). `timeout` bounds that exchange. Returns
// "" or the message to print (no usable device, a device shared).
std::string selectCudaDevice(MPI_Comm world, bool shareDevices, double timeout,
                             int &device);

// Makes the backend, which fails on nothing; its start() (Backend), collective
// over `world` (NCCL bootstrap), sets it up and throws std::runtime_error.
std::unique_ptr<Backend> makeCudaBackend(MPI_Comm world, const CudaBackendConfig &config);

} // namespace pipesched::runtime
