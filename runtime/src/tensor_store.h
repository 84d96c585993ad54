// The rank-local store of activations and gradients, keyed by
// (act|grad, stage, microbatch) (program.h's tensorKey), with the byte
// accounting behind the "peak tensor bytes" figure. The buffers live in the
// backend's memory (backend.h); the store only owns them.
#pragma once

#include "backend.h"

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace pipesched::runtime {

class TensorStore {
public:
  // Stores `tensor` under `key` (replacing any earlier one) and returns it.
  Buffer &put(uint64_t key, BufferPtr tensor);
  const Buffer *find(uint64_t key) const;
  void erase(uint64_t key);
  void clear();

  size_t size() const { return tensors_.size(); }
  size_t liveBytes() const { return liveBytes_; }
  size_t peakBytes() const { return peakBytes_; }

private:
  std::unordered_map<uint64_t, BufferPtr> tensors_;
  size_t liveBytes_ = 0, peakBytes_ = 0;
};

} // namespace pipesched::runtime
