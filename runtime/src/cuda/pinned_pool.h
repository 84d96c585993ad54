// Pinned (page-locked) host memory of the CUDA backend: the staging of
// inputs and targets on their way to the device and, with --gpu-comm mpi,
// of every transfer and collective between the device and MPI. Pinned, so
// that copies are asynchronous DMA. Blocks are leased and come back with
// the event of their last queued copy; a block is reused once that copy
// has finished, so the host never overwrites data in flight.
#pragma once

#include "cuda/cuda_memory.h"

#include <cstddef>
#include <deque>
#include <unordered_map>
#include <vector>

namespace pipesched::runtime::cuda {

class PinnedPool;

// A leased block: `host` holds n floats. Whoever queues a copy that reads or
// writes it sets lastUse to an event recorded after that copy.
class PinnedLease {
public:
  PinnedLease() = default;
  PinnedLease(PinnedPool *pool, float *host, size_t n, EventRef lastUse)
      : host(host), n(n), lastUse(std::move(lastUse)), pool_(pool) {}
  PinnedLease(PinnedLease &&other) noexcept { *this = std::move(other); }
  PinnedLease &operator=(PinnedLease &&other) noexcept;
  ~PinnedLease() { release(); }

  float *host = nullptr;
  size_t n = 0;
  EventRef lastUse; // the caller waits for it before touching `host`

private:
  void release();
  PinnedPool *pool_ = nullptr;
};

class PinnedPool {
public:
  PinnedPool() = default;
  ~PinnedPool(); // frees everything: call with no copy in flight
  PinnedPool(const PinnedPool &) = delete;
  PinnedPool &operator=(const PinnedPool &) = delete;

  // A block of n floats: a free one whose last copy has finished, else a
  // new one while fewer than kBusyBeforeReuse of the size exist, else the
  // oldest free one (its lastUse still pending: wait for it).
  PinnedLease get(size_t n);

private:
  friend class PinnedLease;
  // Enough blocks per size to keep a few copies in flight before the host
  // waits for one (the inputs and targets of consecutive ops).
  static constexpr size_t kBusyBeforeReuse = 4;
  struct Block {
    float *host;
    EventRef lastUse;
  };
  void put(size_t n, float *host, EventRef lastUse);

  std::unordered_map<size_t, std::deque<Block>> free_; // oldest first
  std::unordered_map<size_t, size_t> count_;           // blocks per size
  std::vector<float *> all_;
};

} // namespace pipesched::runtime::cuda
