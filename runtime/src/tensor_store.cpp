#include "tensor_store.h"

#include <algorithm>

namespace pipesched::runtime {

std::vector<float> &TensorStore::put(uint64_t key, size_t n) {
  erase(key);
  std::vector<float> &t = tensors_[key];
  t.assign(n, 0.0f);
  liveBytes_ += n * sizeof(float);
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  return t;
}

void TensorStore::adopt(uint64_t key, std::vector<float> &&tensor) {
  erase(key);
  liveBytes_ += tensor.size() * sizeof(float);
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  tensors_[key] = std::move(tensor);
}

const std::vector<float> *TensorStore::find(uint64_t key) const {
  auto it = tensors_.find(key);
  return it == tensors_.end() ? nullptr : &it->second;
}

void TensorStore::erase(uint64_t key) {
  auto it = tensors_.find(key);
  if (it == tensors_.end())
    return;
  liveBytes_ -= it->second.size() * sizeof(float);
  tensors_.erase(it);
}

void TensorStore::clear() {
  tensors_.clear();
  liveBytes_ = 0;
}

} // namespace pipesched::runtime
