#include "tensor_store.h"

#include <algorithm>

namespace pipesched::runtime {

Buffer &TensorStore::put(uint64_t key, BufferPtr tensor) {
  erase(key);
  liveBytes_ += tensor->bytes();
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  BufferPtr &slot = tensors_[key];
  slot = std::move(tensor);
  return *slot;
}

const Buffer *TensorStore::find(uint64_t key) const {
  auto it = tensors_.find(key);
  return it == tensors_.end() ? nullptr : it->second.get();
}

void TensorStore::erase(uint64_t key) {
  auto it = tensors_.find(key);
  if (it == tensors_.end())
    return;
  liveBytes_ -= it->second->bytes();
  tensors_.erase(it);
}

void TensorStore::clear() {
  tensors_.clear();
  liveBytes_ = 0;
}

} // namespace pipesched::runtime
