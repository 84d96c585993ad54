// The loader's facts per stage: the stage graph, the optional layer
// counts and the tied groups.
#include "program/loader_impl.h"

#include <unordered_map>
#include <utility>

namespace pipesched::runtime::loading {

void Loader::loadStageGraph(const json &doc, Program &p) const {
  const JsonPath where = JsonPath().key(schema::top::kStageGraph);
  const json &g = require(doc, schema::top::kStageGraph, JsonPath());
  checkArray(g, where);
  std::vector<std::pair<int, int>> edges;
  edges.reserve(g.size());
  std::unordered_map<uint64_t, size_t> seen;
  for (size_t i = 0; i < g.size(); ++i) {
    const JsonPath at = where.index(int64_t(i));
    const json &e = g[i];
    if (!e.is_array() || e.size() != 2)
      fail(at, "expected an edge [src, dst], got " + describeValue(e));
    int src = int(toInt(e[0], at.index(0), 0, p.stages));
    int dst = int(toInt(e[1], at.index(1), 0, p.stages));
    auto edge = [&] { // only for messages
      return "edge [" + std::to_string(src) + ", " + std::to_string(dst) + "]";
    };
    if (src >= dst)
      fail(at, edge() + " must go from a lower to a higher stage (src < dst)");
    auto [it, fresh] = seen.emplace(uint64_t(src) << 32 | uint64_t(dst), i);
    if (!fresh)
      fail(at, edge() + " is listed twice (first at stage_graph[" +
                   std::to_string(it->second) + "])");
    edges.emplace_back(src, dst);
  }
  p.graph = StageGraph(p.stages, std::move(edges));
}

// Optional (schema::top::kOptional): one count in [1, kMaxStageLayers] per
// stage.
void Loader::loadLayers(const json &doc, Program &p) const {
  auto it = doc.find(str(schema::top::kLayers));
  if (it == doc.end())
    return;
  const JsonPath where = JsonPath().key(schema::top::kLayers);
  checkArray(*it, where);
  if (it->size() != size_t(p.stages))
    fail(where, "lists " + std::to_string(it->size()) + " layer counts for " +
                    std::to_string(p.stages) + " stages");
  for (size_t s = 0; s < it->size(); ++s)
    p.layers.push_back(
        toInt((*it)[s], where.index(int64_t(s)), 1, schema::kMaxStageLayers + 1));
}

// Optional `tied`: groups of at least two distinct stages, no stage in two.
void Loader::loadTies(const json &doc, Program &p) const {
  p.tieOf.assign(size_t(p.stages), -1);
  auto it = doc.find(str(schema::top::kTied));
  if (it == doc.end())
    return;
  const JsonPath where = JsonPath().key(schema::top::kTied);
  checkArray(*it, where);
  for (size_t g = 0; g < it->size(); ++g) {
    const JsonPath at = where.index(int64_t(g));
    const json &group = (*it)[g];
    checkArray(group, at);
    if (group.size() < 2)
      fail(at, "a tied group needs at least two stages, got " + describeValue(group));
    std::vector<int> stages;
    for (size_t i = 0; i < group.size(); ++i) {
      int s = int(toInt(group[i], at.index(int64_t(i)), 0, p.stages));
      int &tie = p.tieOf[size_t(s)];
      if (tie == int(g))
        fail(at.index(int64_t(i)), "stage " + std::to_string(s) + " is listed twice");
      if (tie >= 0)
        fail(at.index(int64_t(i)), "stage " + std::to_string(s) +
                                       " is already tied in tied[" +
                                       std::to_string(tie) + "]");
      tie = int(g);
      stages.push_back(s);
    }
    p.ties.push_back(std::move(stages));
  }
}

} // namespace pipesched::runtime::loading
