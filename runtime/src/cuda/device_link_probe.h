// The CUDA backend's LinkProbe (link_probe.h): --profile's ring of
// transfers and all-reduce go through the backend's own DeviceComm (NCCL,
// or MPI through pinned host memory) between device buffers, on the
// communication stream, so that a GPU's cost file is calibrated on the
// transfers its steps make. Used after the steps: both streams drained, no
// op open (the command ledger counts nothing), no transfer in flight.
#pragma once

#include "cuda/cuda_memory.h"
#include "cuda/cuda_tracker.h"
#include "cuda/device_comm.h"
#include "exec/link_probe.h"

#include <cuda_runtime_api.h>

#include <memory>

namespace pipesched::runtime::cuda {

struct DeviceLinkContext {
  DeviceComm &comm;
  OpTracker &tracker; // its waits: the deadline and NCCL's errors
  BufferPool &pool;
  EventPool &timing;   // events that time
  cudaStream_t stream; // the communication stream
  int rank;
  double timeout; // --timeout, for the message of a wait that gave up
};

std::unique_ptr<LinkProbe> makeDeviceLinkProbe(const DeviceLinkContext &context);

} // namespace pipesched::runtime::cuda
