#include "program/stage_graph.h"

namespace pipesched::runtime {

StageGraph::StageGraph(int stages, std::vector<std::pair<int, int>> edges)
    : stages_(stages), edges_(std::move(edges)) {
  // Counting sort by destination (predecessors) and by source (successors);
  // stable, so each row keeps the edge list's order.
  predStart_.assign(size_t(stages) + 1, 0);
  succStart_.assign(size_t(stages) + 1, 0);
  for (const auto &[src, dst] : edges_) {
    ++predStart_[size_t(dst) + 1];
    ++succStart_[size_t(src) + 1];
  }
  for (size_t s = 1; s <= size_t(stages); ++s) {
    predStart_[s] += predStart_[s - 1];
    succStart_[s] += succStart_[s - 1];
  }
  preds_.resize(edges_.size());
  succs_.resize(edges_.size());
  std::vector<int> predFill(predStart_.begin(), predStart_.end() - 1);
  std::vector<int> succFill(succStart_.begin(), succStart_.end() - 1);
  for (const auto &[src, dst] : edges_) {
    preds_[size_t(predFill[size_t(dst)]++)] = src;
    succs_[size_t(succFill[size_t(src)]++)] = dst;
  }
  for (int s = 0; s < stages; ++s)
    sinks_ += isSink(s);
}

StageGraph StageGraph::chain(int stages) {
  std::vector<std::pair<int, int>> edges;
  for (int s = 0; s + 1 < stages; ++s)
    edges.emplace_back(s, s + 1);
  return StageGraph(stages, std::move(edges));
}

} // namespace pipesched::runtime
