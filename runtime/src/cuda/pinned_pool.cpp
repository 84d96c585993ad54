#include "cuda/pinned_pool.h"

#include "cuda/cuda_check.h"

namespace pipesched::runtime::cuda {

PinnedLease &PinnedLease::operator=(PinnedLease &&other) noexcept {
  if (this != &other) {
    release();
    host = other.host;
    n = other.n;
    lastUse = std::move(other.lastUse);
    pool_ = other.pool_;
    other.host = nullptr;
    other.pool_ = nullptr;
  }
  return *this;
}

void PinnedLease::release() {
  if (pool_ && host)
    pool_->put(n, host, std::move(lastUse));
  pool_ = nullptr;
  host = nullptr;
}

PinnedPool::~PinnedPool() {
  free_.clear(); // events back to their pool first
  for (float *p : all_)
    cudaFreeHost(p);
}

PinnedLease PinnedPool::get(size_t n) {
  std::deque<Block> &blocks = free_[n];
  for (auto it = blocks.begin(); it != blocks.end(); ++it) {
    cudaError_t e = it->lastUse ? cudaEventQuery(it->lastUse.get()) : cudaSuccess;
    if (e == cudaErrorNotReady)
      continue;
    check(e, "cudaEventQuery");
    PinnedLease lease(this, it->host, n, nullptr);
    blocks.erase(it);
    return lease;
  }
  if (blocks.empty() || count_[n] < kBusyBeforeReuse) {
    void *p = nullptr;
    check(cudaHostAlloc(&p, n * sizeof(float), cudaHostAllocDefault), "cudaHostAlloc");
    all_.push_back(static_cast<float *>(p));
    ++count_[n];
    return PinnedLease(this, static_cast<float *>(p), n, nullptr);
  }
  Block b = std::move(blocks.front());
  blocks.pop_front();
  return PinnedLease(this, b.host, n, std::move(b.lastUse));
}

void PinnedPool::put(size_t n, float *host, EventRef lastUse) {
  free_[n].push_back(Block{host, std::move(lastUse)});
}

} // namespace pipesched::runtime::cuda
