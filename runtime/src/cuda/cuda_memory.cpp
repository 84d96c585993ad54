#include "cuda/cuda_memory.h"

#include "cuda/cuda_check.h"

namespace pipesched::runtime::cuda {

EventPool::~EventPool() {
  for (cudaEvent_t e : free_)
    cudaEventDestroy(e);
}

EventRef EventPool::record(cudaStream_t stream) {
  cudaEvent_t e;
  if (free_.empty()) {
    check(
        cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming),
        "cudaEventCreate");
  } else {
    e = free_.back();
    free_.pop_back();
  }
  EventRef ref(e, [this](cudaEvent_t done) { free_.push_back(done); });
  check(cudaEventRecord(e, stream), "cudaEventRecord");
  return ref;
}

DeviceBuffer::~DeviceBuffer() {
  pool_.put(size(), ptr, std::move(computeUse), std::move(commUse));
}

// Stream-ordered memory goes back the stream-ordered way.
BufferPool::~BufferPool() {
  free_.clear(); // events back to their pool first
  for (float *p : all_)
    cudaFreeAsync(p, compute_);
  cudaStreamSynchronize(compute_);
}

// The oldest freed block of the size: the most likely one whose last uses
// have finished, so that its events rarely make a stream wait.
std::unique_ptr<DeviceBuffer> BufferPool::get(size_t n) {
  std::deque<Block> &blocks = free_[n];
  if (!blocks.empty()) {
    Block b = std::move(blocks.front());
    blocks.pop_front();
    return std::make_unique<DeviceBuffer>(n, b.ptr, *this, std::move(b.computeUse),
                                          std::move(b.commUse));
  }
  void *p = nullptr;
  check(cudaMallocAsync(&p, n * sizeof(float), compute_), "cudaMallocAsync");
  all_.push_back(static_cast<float *>(p));
  bytes_ += n * sizeof(float);
  return std::make_unique<DeviceBuffer>(n, static_cast<float *>(p), *this,
                                        events_.record(compute_), nullptr);
}

void BufferPool::put(size_t n, float *ptr, EventRef computeUse, EventRef commUse) {
  free_[n].push_back(Block{ptr, std::move(computeUse), std::move(commUse)});
}

} // namespace pipesched::runtime::cuda
