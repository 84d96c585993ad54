// Device selection of the CUDA backend (cuda_backend.h): the ranks of a
// node gather what each sees over MPI and apply chooseDevices
// (device_choice.h) to the same data, so they agree.
#include "comm/agreement.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_device.h"
#include "cuda/device_choice.h"
#include "cuda/env_default.h"

#include <cuda.h> // the driver's types only: its entry point comes from the runtime
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace pipesched::runtime {
namespace {

using cuda::DeviceUuid;
using cuda::NodeRank;

// The launcher's node-local rank if it exports one, else `fallback` (the
// rank in an MPI shared-memory split).
int localRank(int fallback) {
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return fallback;
}

// The UUIDs of the devices this process sees, or the reason it sees none.
std::string visibleDevices(std::vector<DeviceUuid> &uuids) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return std::string("no CUDA device available (cudaGetDeviceCount: ") +
           cudaGetErrorString(e) + ")";
  if (count == 0)
    return "no CUDA device available (cudaGetDeviceCount: 0 devices)";
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    e = cudaGetDeviceProperties(&prop, d);
    if (e != cudaSuccess) {
      uuids.clear();
      return "cannot query CUDA device " + std::to_string(d) +
             " (cudaGetDeviceProperties: " + cudaGetErrorString(e) + ")";
    }
    DeviceUuid u;
    std::memcpy(u.data(), prop.uuid.bytes, u.size());
    uuids.push_back(u);
  }
  return "";
}

// Every rank of `node` (in node-rank order): world rank, local rank and
// visible UUIDs. Bounded by `timeout` like every agreement before the run.
std::vector<NodeRank> gatherNode(MPI_Comm node, int rank, int local,
                                 const std::vector<DeviceUuid> &visible, double timeout) {
  int size = 1;
  MPI_Comm_size(node, &size);
  const size_t n = static_cast<size_t>(size);
  const char *what = "the exchange of GPU UUIDs between the ranks of a node";
  int mine[3] = {rank, local, int(visible.size())};
  std::vector<int> heads(3 * n);
  MPI_Request request;
  MPI_Iallgather(mine, 3, MPI_INT, heads.data(), 3, MPI_INT, node, &request);
  waitOrAbort(&request, 1, rank, timeout, what);

  const int uuidBytes = int(sizeof(DeviceUuid));
  std::vector<int> counts(n), offsets(n);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    counts[size_t(r)] = heads[3 * size_t(r) + 2] * uuidBytes;
    offsets[size_t(r)] = total;
    total += counts[size_t(r)];
  }
  std::vector<DeviceUuid> all(size_t(total / uuidBytes));
  MPI_Iallgatherv(visible.data(), int(visible.size()) * uuidBytes, MPI_BYTE, all.data(),
                  counts.data(), offsets.data(), MPI_BYTE, node, &request);
  waitOrAbort(&request, 1, rank, timeout, what);

  std::vector<NodeRank> ranks(n);
  for (int r = 0; r < size; ++r) {
    NodeRank &each = ranks[size_t(r)];
    each.rank = heads[3 * size_t(r)];
    each.localRank = heads[3 * size_t(r) + 1];
    auto first = all.begin() + offsets[size_t(r)] / uuidBytes;
    each.visible.assign(first, first + heads[3 * size_t(r) + 2]);
  }
  return ranks;
}

// Eager loading was asked for before MPI_Init from the launcher's world
// size (main.cpp); under a launcher that announces none the run looked
// like one rank. Rank 0 says so: a module load could then wait for a peer.
void warnIfLazyWithPeers(int rank, int size, bool shareDevices) {
  const char *mode = std::getenv("CUDA_MODULE_LOADING");
  const bool announced = cuda::eagerModuleLoadingMatters(
      true, !shareDevices, cuda::launcherWorldSize([](const char *n) { return std::getenv(n); }));
  if (rank == 0 && cuda::eagerModuleLoadingMatters(true, !shareDevices, size) &&
      !announced && !(mode && *mode))
    std::fprintf(stderr,
                 "pipeline-run: warning: the launcher announced no world size before "
                 "MPI_Init (OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS), so CUDA loads "
                 "modules lazily under NCCL with %d ranks; set CUDA_MODULE_LOADING=EAGER\n",
                 size);
}

} // namespace

std::string selectCudaDevice(MPI_Comm world, bool shareDevices, double timeout,
                             int &device) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  warnIfLazyWithPeers(rank, size, shareDevices);
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nodeRank = 0;
  MPI_Comm_rank(node, &nodeRank);

  std::vector<DeviceUuid> visible;
  const std::string problem = visibleDevices(visible);
  // Every rank of the node takes part, whether it sees devices or not.
  std::vector<NodeRank> ranks = gatherNode(node, rank, localRank(nodeRank), visible, timeout);
  MPI_Comm_free(&node);

  const std::string prefix = "pipeline-run: --backend cuda: ";
  if (!problem.empty())
    return prefix + problem;
  const cuda::DeviceChoice mine = cuda::chooseDevices(ranks, shareDevices)[size_t(nodeRank)];
  if (!mine.error.empty())
    return prefix + mine.error;
  device = mine.device;
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return prefix + "cannot use CUDA device " + std::to_string(device) +
           " (cudaSetDevice: " + cudaGetErrorString(e) + ")";
  return "";
}

namespace cuda {
namespace {

// Through the runtime's driver entry point: linking libcuda itself would
// keep pipeline-run from starting on machines without a driver.
const char *moduleLoadingMode() {
  using GetMode = CUresult (*)(CUmoduleLoadingMode *);
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &fn, 11070,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn)
    return "unknown";
  CUmoduleLoadingMode mode{};
  if (reinterpret_cast<GetMode>(fn)(&mode) != CUDA_SUCCESS)
    return "unknown";
  return mode == CU_MODULE_EAGER_LOADING ? "eager" : "lazy";
}

} // namespace

std::string describeDevice(int device) {
  cudaDeviceProp prop{};
  std::string name = "properties unavailable", uuid;
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    name = prop.name;
    DeviceUuid u;
    std::memcpy(u.data(), prop.uuid.bytes, u.size());
    uuid = ", " + formatUuid(u);
  }
  return "device " + std::to_string(device) + " (" + name + uuid + "; module loading " +
         moduleLoadingMode() + ")";
}

} // namespace cuda
} // namespace pipesched::runtime
