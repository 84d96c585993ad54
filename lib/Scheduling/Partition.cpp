//===- Partition.cpp - consecutive layers into pipeline stages ------------===//

#include "pipesched/Scheduling/Partition.h"
#include "pipesched/Scheduling/Saturating.h"

#include <algorithm>
#include <limits>

using namespace pipesched::scheduling;

namespace {

constexpr int64_t kUnreachable = std::numeric_limits<int64_t>::max();

std::string layerName(const PartitionProblem &p, size_t i) {
  return "layers[" + std::to_string(i) + "] ('" + p.layers[i].name + "')";
}

/// "layers 4..7 ('block3'..'block6')".
std::string layerRange(const PartitionProblem &p, size_t first, size_t end) {
  if (end - first == 1)
    return "layer " + std::to_string(first) + " ('" + p.layers[first].name + "')";
  return "layers " + std::to_string(first) + ".." + std::to_string(end - 1) +
         " ('" + p.layers[first].name + "'..'" + p.layers[end - 1].name + "')";
}

/// Prefix sums of the layers' times and weight bytes (no overflow after
/// check()).
struct Prefix {
  std::vector<int64_t> time, weights;
  explicit Prefix(const PartitionProblem &p) : time(1, 0), weights(1, 0) {
    for (size_t i = 0; i < p.layers.size(); ++i) {
      time.push_back(time.back() + p.layerTime(i));
      weights.push_back(weights.back() + p.layers[i].weightBytes);
    }
  }
};

int64_t stageMemory(const PartitionProblem &p, const Prefix &prefix,
                    int64_t stage, size_t first, size_t end) {
  return saturatingAdd(prefix.weights[end] - prefix.weights[first],
                       saturatingMul(p.inFlight(stage), p.inputBytesAt(first)));
}

/// "weights 800 + 2 x input 200 = 1200 bytes".
std::string memoryTerms(const Partition &part, const PartitionProblem &p,
                        int64_t s) {
  return "weights " + std::to_string(part.weightBytes[s]) + " + " +
         std::to_string(p.inFlight(s)) + " x input " +
         std::to_string(part.inputBytes[s]) + " = " +
         std::to_string(part.memoryBytes[s]) + " bytes";
}

std::string stageLayers(const Partition &part, const PartitionProblem &p,
                        int64_t s) {
  size_t first = size_t(part.starts[s]);
  size_t end = s + 1 < part.stages() ? size_t(part.starts[s + 1]) : p.layers.size();
  return layerRange(p, first, end);
}

/// The dynamic program over (k stages, the first j layers): value(k, j)
/// is the least objective of splitting layers [0, j) into stages 0..k-1.
/// `segment(k, i, j)` is the objective of layers [i, j) as stage k - 1
/// (kUnreachable: not allowed); `bound(i, j)` is a lower bound of it that
/// does not decrease as i decreases, to stop the scan early.
template <typename Segment, typename Bound>
std::optional<std::vector<int64_t>> solve(const PartitionProblem &p,
                                          Segment segment, Bound bound,
                                          int64_t &best) {
  const int64_t L = int64_t(p.layers.size()), S = p.stages;
  const size_t width = size_t(L + 1);
  std::vector<int64_t> value(size_t(S + 1) * width, kUnreachable);
  std::vector<int32_t> from(size_t(S + 1) * width, -1);
  auto at = [&](int64_t k, int64_t j) { return size_t(k) * width + size_t(j); };
  value[at(0, 0)] = 0;
  for (int64_t k = 1; k <= S; ++k) {
    // Stage k - 1 ends at j; the S - k stages after it need a layer each.
    for (int64_t j = k; j <= L - (S - k); ++j) {
      int64_t here = kUnreachable;
      int32_t choice = -1;
      // The last stage starts as late as possible on ties: i descends and
      // only a strict improvement replaces the choice. The first stage can
      // only start at layer 0.
      for (int64_t i = k == 1 ? 0 : j - 1; i >= k - 1; --i) {
        if (bound(i, j) >= here)
          break;
        int64_t before = value[at(k - 1, i)];
        if (before == kUnreachable)
          continue;
        int64_t cost = segment(k, i, j);
        if (cost == kUnreachable)
          continue;
        int64_t candidate = std::max(before, cost);
        if (candidate < here) {
          here = candidate;
          choice = int32_t(i);
        }
      }
      value[at(k, j)] = here;
      from[at(k, j)] = choice;
    }
  }
  best = value[at(S, L)];
  if (best == kUnreachable)
    return std::nullopt;
  std::vector<int64_t> starts(static_cast<size_t>(S), 0);
  for (int64_t k = S, j = L; k >= 1; --k) {
    j = from[at(k, j)];
    starts[size_t(k - 1)] = j;
  }
  return starts;
}

/// The message for a memory limit that no partition fits.
std::string noFit(const PartitionProblem &p) {
  MemoryFloor floor = leastMemory(p);
  const Partition &part = floor.partition;
  return "no partition into " + std::to_string(p.stages) + " stages fits in " +
         std::to_string(*p.memoryLimitBytes) +
         " bytes per stage: the one needing the least memory still needs " +
         std::to_string(floor.bytes) + " bytes on stage " +
         std::to_string(floor.stage) + " (" + stageLayers(part, p, floor.stage) +
         ": " + memoryTerms(part, p, floor.stage) + ")";
}

} // namespace

int64_t PartitionProblem::inFlight(int64_t stage) const {
  int64_t n = stages - stage;
  return microbatches > 0 ? std::min(n, microbatches) : n;
}

int64_t PartitionProblem::layerTime(size_t layer) const {
  const Layer &l = layers[layer];
  return l.fwd + l.bwd + l.bwdWeight;
}

int64_t PartitionProblem::inputBytesAt(size_t first) const {
  return first == 0 ? inputBytes : layers[first - 1].actBytes;
}

std::string PartitionProblem::check() const {
  const int64_t L = int64_t(layers.size());
  if (L == 0)
    return "no layers to partition";
  if (L > kMaxPartitionLayers)
    return std::to_string(L) + " layers, more than the supported " +
           std::to_string(kMaxPartitionLayers);
  if (stages < 1)
    return "the stage count must be positive, got " + std::to_string(stages);
  if (stages > L)
    return "cannot split " + std::to_string(L) + " layers into " +
           std::to_string(stages) + " stages: every stage needs a layer";
  if (stages * (L + 1) > kMaxPartitionCells)
    return std::to_string(stages) + " stages x " + std::to_string(L) +
           " layers make more than " + std::to_string(kMaxPartitionCells) +
           " cells of the dynamic program";
  // The scan of each cell may not stop early (segments ruled out by the
  // memory limit): bound the program's steps, not only its table.
  if (stages * L * L > kMaxPartitionSteps)
    return std::to_string(stages) + " stages x " + std::to_string(L) +
           "^2 layers make more than " + std::to_string(kMaxPartitionSteps) +
           " steps of the dynamic program: fewer stages or layers";
  auto bad = [](int64_t v) { return v < 0 || v >= kMaxPartitionValue; };
  auto range = [](const char *what, int64_t v) {
    return std::string(what) + " = " + std::to_string(v) + " is not in [0, 2^53)";
  };
  if (bad(inputBytes))
    return range("the input activation", inputBytes);
  int64_t time = 0, weights = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer &l = layers[i];
    for (auto [what, v] : {std::pair{"fwd", l.fwd}, std::pair{"bwd", l.bwd},
                           std::pair{"bwd_w", l.bwdWeight},
                           std::pair{"act", l.actBytes},
                           std::pair{"weights", l.weightBytes}})
      if (bad(v))
        return layerName(*this, i) + ": " + range(what, v);
    if (__builtin_add_overflow(time, l.fwd, &time) ||
        __builtin_add_overflow(time, l.bwd, &time) ||
        __builtin_add_overflow(time, l.bwdWeight, &time))
      return "the layers' total time overflows 64 bits at " + layerName(*this, i);
    if (__builtin_add_overflow(weights, l.weightBytes, &weights))
      return "the layers' total weight bytes overflow 64 bits at " +
             layerName(*this, i);
  }
  if (memoryLimitBytes && (*memoryLimitBytes < 1 || *memoryLimitBytes >= kMaxPartitionValue))
    return "the memory limit " + std::to_string(*memoryLimitBytes) +
           " bytes is not in [1, 2^53)";
  if (microbatches < 0)
    return "the microbatch count must not be negative, got " +
           std::to_string(microbatches);
  return "";
}

std::vector<int64_t> Partition::layerCounts(int64_t totalLayers) const {
  std::vector<int64_t> counts;
  for (size_t s = 0; s < starts.size(); ++s)
    counts.push_back((s + 1 < starts.size() ? starts[s + 1] : totalLayers) - starts[s]);
  return counts;
}

Partition pipesched::scheduling::evaluatePartition(const PartitionProblem &p,
                                                   std::vector<int64_t> starts) {
  Prefix prefix(p);
  Partition part;
  part.starts = std::move(starts);
  for (int64_t s = 0; s < part.stages(); ++s) {
    size_t first = size_t(part.starts[s]);
    size_t end = s + 1 < part.stages() ? size_t(part.starts[s + 1]) : p.layers.size();
    int64_t fwd = 0, bwd = 0, bwdWeight = 0;
    for (size_t i = first; i < end; ++i) {
      fwd += p.layers[i].fwd;
      bwd += p.layers[i].bwd;
      bwdWeight += p.layers[i].bwdWeight;
    }
    part.fwd.push_back(fwd);
    part.bwd.push_back(bwd);
    part.bwdWeight.push_back(bwdWeight);
    part.inputBytes.push_back(p.inputBytesAt(first));
    part.weightBytes.push_back(prefix.weights[end] - prefix.weights[first]);
    part.memoryBytes.push_back(stageMemory(p, prefix, s, first, end));
    part.bottleneck = std::max(part.bottleneck, part.stageTime(s));
  }
  return part;
}

std::string Partition::verify(const PartitionProblem &p) const {
  const int64_t L = int64_t(p.layers.size());
  if (stages() != p.stages)
    return std::to_string(stages()) + " stages, expected " + std::to_string(p.stages);
  if (starts.empty() || starts[0] != 0)
    return "stage 0 does not start at layer 0";
  for (int64_t s = 1; s < stages(); ++s)
    if (starts[s] <= starts[s - 1] || starts[s] >= L)
      return "stage " + std::to_string(s) + " starts at layer " +
             std::to_string(starts[s]) + ": stages must be non-empty and in order";
  Partition again = evaluatePartition(p, starts);
  if (again.fwd != fwd || again.bwd != bwd || again.bwdWeight != bwdWeight)
    return "the per-stage durations are not the sums of their layers";
  if (again.inputBytes != inputBytes || again.weightBytes != weightBytes ||
      again.memoryBytes != memoryBytes)
    return "the per-stage sizes are not those of their layers";
  if (again.bottleneck != bottleneck)
    return "the bottleneck " + std::to_string(bottleneck) +
           " is not the slowest stage's time " + std::to_string(again.bottleneck);
  if (p.memoryLimitBytes)
    for (int64_t s = 0; s < stages(); ++s)
      if (memoryBytes[s] > *p.memoryLimitBytes)
        return "stage " + std::to_string(s) + " needs " +
               std::to_string(memoryBytes[s]) + " bytes, more than the limit " +
               std::to_string(*p.memoryLimitBytes);
  return "";
}

PartitionResult pipesched::scheduling::partitionLayers(const PartitionProblem &p) {
  PartitionResult result;
  if (result.error = p.check(); !result.error.empty())
    return result;
  Prefix prefix(p);
  const int64_t limit = p.memoryLimitBytes.value_or(kUnreachable);
  auto segment = [&](int64_t k, int64_t i, int64_t j) {
    if (stageMemory(p, prefix, k - 1, size_t(i), size_t(j)) > limit)
      return kUnreachable;
    return prefix.time[j] - prefix.time[i];
  };
  // Both grow as the stage starts earlier: once the stage alone is as slow
  // as the best found, or its weights alone exceed the limit, stop.
  auto bound = [&](int64_t i, int64_t j) {
    if (prefix.weights[j] - prefix.weights[i] > limit)
      return kUnreachable;
    return prefix.time[j] - prefix.time[i];
  };
  int64_t best = 0;
  std::optional<std::vector<int64_t>> starts = solve(p, segment, bound, best);
  if (!starts) {
    result.error = noFit(p);
    return result;
  }
  result.partition = evaluatePartition(p, std::move(*starts));
  return result;
}

PartitionResult pipesched::scheduling::uniformPartition(const PartitionProblem &p) {
  PartitionResult result;
  if (result.error = p.check(); !result.error.empty())
    return result;
  const int64_t L = int64_t(p.layers.size()), S = p.stages;
  std::vector<int64_t> starts;
  for (int64_t s = 0; s < S; ++s)
    starts.push_back(s * (L / S) + std::min(s, L % S));
  result.partition = evaluatePartition(p, std::move(starts));
  const Partition &part = result.partition;
  if (p.memoryLimitBytes)
    for (int64_t s = 0; s < S; ++s)
      if (part.memoryBytes[s] > *p.memoryLimitBytes) {
        result.error = "stage " + std::to_string(s) + " cannot fit in " +
                       std::to_string(*p.memoryLimitBytes) +
                       " bytes: with equal layer counts it holds " +
                       stageLayers(part, p, s) + ": " + memoryTerms(part, p, s);
        break;
      }
  return result;
}

MemoryFloor pipesched::scheduling::leastMemory(const PartitionProblem &p) {
  Prefix prefix(p);
  // Saturated memory is huge, not forbidden (kUnreachable means that).
  auto segment = [&](int64_t k, int64_t i, int64_t j) {
    return std::min(stageMemory(p, prefix, k - 1, size_t(i), size_t(j)),
                    kUnreachable - 1);
  };
  // A stage needs at least its weights, which grow as it starts earlier.
  auto bound = [&](int64_t i, int64_t j) {
    return prefix.weights[j] - prefix.weights[i];
  };
  MemoryFloor floor;
  std::optional<std::vector<int64_t>> starts = solve(p, segment, bound, floor.bytes);
  // Every stage may hold anything without a limit: a partition exists.
  floor.partition = evaluatePartition(p, std::move(*starts));
  const std::vector<int64_t> &memory = floor.partition.memoryBytes;
  floor.stage = std::max_element(memory.begin(), memory.end()) - memory.begin();
  floor.bytes = memory[size_t(floor.stage)];
  return floor;
}
