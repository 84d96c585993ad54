// The rank-local store of activations and gradients, keyed by
// (act|grad, stage, microbatch) (program.h's tensorKey), with the byte
// accounting behind the "peak tensor bytes" figure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace pipesched::runtime {

class TensorStore {
public:
  // A zeroed buffer of n floats under `key` (replacing any earlier one).
  // References stay valid until erase(key): unordered_map nodes do not move.
  std::vector<float> &put(uint64_t key, size_t n);
  // Stores `tensor` (a finished receive) under `key`.
  void adopt(uint64_t key, std::vector<float> &&tensor);
  const std::vector<float> *find(uint64_t key) const;
  void erase(uint64_t key);
  void clear();

  size_t size() const { return tensors_.size(); }
  size_t liveBytes() const { return liveBytes_; }
  size_t peakBytes() const { return peakBytes_; }

private:
  std::unordered_map<uint64_t, std::vector<float>> tensors_;
  size_t liveBytes_ = 0, peakBytes_ = 0;
};

} // namespace pipesched::runtime
