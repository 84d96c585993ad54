// The rank-local store of activations and gradients, keyed by tensor id
// (the schema's 2 * (stage * B + microbatch) + (0 act | 1 grad)), with the byte
// accounting behind the "peak tensor bytes" figure. The buffers live in the
// backend's memory (backend.h); the store only owns them.
#pragma once

#include "exec/backend.h"

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace pipesched::runtime {

class TensorStore {
public:
  // Stores `tensor` under `id` (replacing any earlier one) and returns it.
  Buffer &put(int64_t id, BufferPtr tensor);
  const Buffer *find(int64_t id) const;
  void erase(int64_t id);
  void clear();

  size_t size() const { return tensors_.size(); }
  size_t liveBytes() const { return liveBytes_; }
  size_t peakBytes() const { return peakBytes_; }

private:
  std::unordered_map<int64_t, BufferPtr> tensors_;
  size_t liveBytes_ = 0, peakBytes_ = 0;
};

} // namespace pipesched::runtime
