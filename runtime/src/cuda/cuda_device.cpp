// Device selection of the CUDA backend (cuda_backend.h).
#include "cuda_backend.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

namespace pipesched::runtime {
namespace {

// The launcher's node-local rank if it exports one, else `fallback` (the
// rank in an MPI shared-memory split).
int localRank(int fallback) {
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return fallback;
}

} // namespace

std::string selectCudaDevice(MPI_Comm world, int &device) {
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nodeRank = 0, nodeSize = 1;
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_free(&node);

  const std::string prefix = "pipeline-run: --backend cuda: ";
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return prefix +
           "no CUDA device available (cudaGetDeviceCount: " + cudaGetErrorString(e) + ")";
  if (count == 0)
    return prefix + "no CUDA device available (cudaGetDeviceCount: 0 devices)";
  // NCCL refuses two ranks of one communicator on one device.
  if (nodeSize > count)
    return prefix + std::to_string(nodeSize) + " ranks on this node but " +
           std::to_string(count) + " CUDA device(s); NCCL needs a device per rank " +
           "(docs/runtime.md, Backends)";
  device = localRank(nodeRank) % count;
  e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return prefix + "cannot use CUDA device " + std::to_string(device) +
           " (cudaSetDevice: " + cudaGetErrorString(e) + ")";
  return "";
}

} // namespace pipesched::runtime
