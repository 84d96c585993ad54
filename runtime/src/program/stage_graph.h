// The stage graph of a program: a DAG over stages 0..S-1 whose edges
// [src, dst] (src < dst) say that dst's forward reads src's output. A stage
// without predecessors reads the microbatch's data; a stage without
// successors (a sink) computes a loss. Predecessors and successors keep the
// order of the edge list: it fixes the order of every fan-in sum (forward
// inputs, gradients of a fan-out stage), so that the executor and the
// reference add the same numbers in the same order.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace pipesched::runtime {

// A read-only view of consecutive values (C++17 has no std::span).
template <class T> struct View {
  const T *first = nullptr;
  size_t count = 0;
  const T *begin() const { return first; }
  const T *end() const { return first + count; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  T operator[](size_t i) const { return first[i]; }
};

// The predecessors or successors of a stage.
using StageList = View<int>;

class StageGraph {
public:
  StageGraph() = default;
  // `edges` must be valid (the loader checks): 0 <= src < dst < stages, no
  // duplicates.
  StageGraph(int stages, std::vector<std::pair<int, int>> edges);
  // 0 -> 1 -> ... -> S-1.
  static StageGraph chain(int stages);

  int stages() const { return stages_; }
  const std::vector<std::pair<int, int>> &edges() const { return edges_; }
  StageList predecessors(int s) const {
    return {preds_.data() + predStart_[s], size_t(predStart_[s + 1] - predStart_[s])};
  }
  StageList successors(int s) const {
    return {succs_.data() + succStart_[s], size_t(succStart_[s + 1] - succStart_[s])};
  }
  bool isSink(int s) const { return succStart_[s + 1] == succStart_[s]; }
  int sinks() const { return sinks_; }

private:
  int stages_ = 0, sinks_ = 0;
  std::vector<std::pair<int, int>> edges_;
  // Compressed rows: the predecessors of s are preds_[predStart_[s] ..
  // predStart_[s+1]), in edge order; the same for successors.
  std::vector<int> predStart_, preds_, succStart_, succs_;
};

} // namespace pipesched::runtime
