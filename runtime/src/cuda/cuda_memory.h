// Device memory of the CUDA backend, with the events that order it between
// the compute and the communication stream.
//
// Every DeviceBuffer remembers its last use on each stream that the other
// stream has not waited for yet (computeUse, commUse). Before a stream
// touches a buffer it waits for the other stream's event; afterwards it
// records its own. Freed buffers keep their events in the pool, so memory
// is reused without a host synchronization and without a race.
#pragma once

#include "exec/backend.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace pipesched::runtime::cuda {

using EventRef = std::shared_ptr<CUevent_st>; // cudaEvent_t is CUevent_st *

// Recycles events: creating one per op would cost more than recording it.
class EventPool {
public:
  explicit EventPool(bool timing) : timing_(timing) {}
  ~EventPool();
  EventPool(const EventPool &) = delete;
  EventPool &operator=(const EventPool &) = delete;

  // An event recorded on `stream` now; back in the pool with its last owner.
  EventRef record(cudaStream_t stream);

private:
  std::vector<cudaEvent_t> free_;
  bool timing_;
};

class BufferPool;

class DeviceBuffer final : public Buffer {
public:
  DeviceBuffer(size_t n, float *ptr, BufferPool &pool, EventRef computeUse,
               EventRef commUse)
      : Buffer(n), ptr(ptr), computeUse(std::move(computeUse)),
        commUse(std::move(commUse)), pool_(pool) {}
  ~DeviceBuffer() override;

  float *const ptr;
  mutable EventRef computeUse, commUse;

private:
  BufferPool &pool_;
};

inline DeviceBuffer &dev(Buffer &b) { return static_cast<DeviceBuffer &>(b); }
inline const DeviceBuffer &dev(const Buffer &b) {
  return static_cast<const DeviceBuffer &>(b);
}

// Buffers by size (the executor asks for few sizes: tensors and stages).
// New memory comes from cudaMallocAsync on the compute stream (stream
// ordered: no device-wide synchronization while NCCL kernels run); its
// computeUse event makes the communication stream wait for the allocation.
class BufferPool {
public:
  BufferPool(cudaStream_t compute, EventPool &events)
      : compute_(compute), events_(events) {}
  ~BufferPool(); // frees everything: call with the device idle
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  std::unique_ptr<DeviceBuffer> get(size_t n);
  void put(size_t n, float *ptr, EventRef computeUse, EventRef commUse);
  size_t bytes() const { return bytes_; }

private:
  struct Block {
    float *ptr;
    EventRef computeUse, commUse;
  };
  cudaStream_t compute_;
  EventPool &events_;
  std::unordered_map<size_t, std::deque<Block>> free_; // oldest first
  std::vector<float *> all_;
  size_t bytes_ = 0;
};

} // namespace pipesched::runtime::cuda
