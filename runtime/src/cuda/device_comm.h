// Transfers and gradient collectives of the CUDA backend, one interface
// over two ways of moving device data between ranks (--gpu-comm):
//  - nccl: NCCL on the communication stream; a GPU per rank.
//  - mpi:  staged through pinned host memory over the MPI transport of the
//          CPU backend (transport.h: non-blocking MPI polled against
//          --timeout); ranks may share a GPU, which NCCL refuses.
// The backend has made the communication stream wait for the buffers'
// last compute use before a call, and records the stream's use after it.
#pragma once

#include "comm/transport.h"
#include "cuda/cuda_memory.h"
#include "cuda/cuda_tracker.h"
#include "cuda/pinned_pool.h"
#include "exec/backend.h"
#include "program/program.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <memory>
#include <string>

namespace pipesched::runtime::cuda {

class DeviceComm {
public:
  virtual ~DeviceComm() = default;

  // Upper bounds of the GPU commands one call queues (command_ledger.h).
  virtual size_t transferCommands(size_t count) const = 0;
  virtual size_t collectiveCommands() const = 0;

  // A group of sends and receives (a lone one is a group of one), in
  // program order; false when a wait gave up (`stall` says where).
  virtual bool transfer(const Transfer *transfers, size_t count, Stall &stall) = 0;
  // Sums over program.groups[group] in place / onto `root` (a world rank;
  // the others' buffers are left as they were).
  virtual bool allreduce(Buffer &grad, int group, Stall &stall) = 0;
  virtual bool reduce(Buffer &grad, int root, int group, Stall &stall) = 0;
  // Sums over every rank in place, as allreduce() does over a group
  // (--profile's all-reduce, device_link_probe.h). Two ranks or more.
  virtual bool allreduceAll(Buffer &data, Stall &stall) = 0;

  // "" or an asynchronous error, polled by every host wait.
  virtual std::string asyncError() const { return ""; }
  // After a stall, before the job ends.
  virtual void abort() {}
  // For rank 0's start-up line.
  virtual std::string describe() const = 0;
};

// What an implementation queues on and waits with.
struct DeviceCommContext {
  const Program &program;
  int rank;
  cudaStream_t stream; // the communication stream
  EventPool &events;
  OpTracker &tracker;
};

// Collective over `world`: the communicators, set up within setupSeconds.
std::unique_ptr<DeviceComm> makeNcclComm(MPI_Comm world, const DeviceCommContext &context,
                                         double setupSeconds);
std::unique_ptr<DeviceComm> makeMpiComm(Transport &transport, PinnedPool &pinned,
                                        const DeviceCommContext &context);

} // namespace pipesched::runtime::cuda
