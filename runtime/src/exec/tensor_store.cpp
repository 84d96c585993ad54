#include "exec/tensor_store.h"

#include <algorithm>

namespace pipesched::runtime {

Buffer &TensorStore::put(int64_t id, BufferPtr tensor) {
  erase(id);
  liveBytes_ += tensor->bytes();
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  BufferPtr &slot = tensors_[id];
  slot = std::move(tensor);
  return *slot;
}

const Buffer *TensorStore::find(int64_t id) const {
  auto it = tensors_.find(id);
  return it == tensors_.end() ? nullptr : it->second.get();
}

void TensorStore::erase(int64_t id) {
  auto it = tensors_.find(id);
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
