//===- Priorities.cpp - the priority n(s, b, d) of the master schedule ----===//

#include "pipesched/Scheduling/Priorities.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

using namespace pipesched::scheduling;

int64_t pipesched::scheduling::sweepPosition(int64_t S, int64_t s,
                                             Direction d) {
  switch (d) {
  case Direction::Forward:
    return s;
  case Direction::Backward:
    return S + (S - 1 - s);
  case Direction::BackwardWeight:
    return 2 * S + (S - 1 - s);
  }
  return 0;
}

std::vector<int64_t>
pipesched::scheduling::rankKeys(const std::vector<int64_t> &keys,
                                size_t width) {
  size_t n = width ? keys.size() / width : 0;
  std::vector<uint32_t> byKey(n);
  std::iota(byKey.begin(), byKey.end(), 0u);
  auto row = [&](uint32_t i) { return keys.begin() + std::ptrdiff_t(i * width); };
  auto less = [&](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(row(a), row(a) + std::ptrdiff_t(width),
                                        row(b), row(b) + std::ptrdiff_t(width));
  };
  std::sort(byKey.begin(), byKey.end(), less);
  std::vector<int64_t> rank(n, 0);
  int64_t current = 0;
  for (size_t k = 0; k < n; ++k) {
    if (k > 0 && less(byKey[k - 1], byKey[k]))
      ++current;
    rank[byKey[k]] = current;
  }
  return rank;
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

static int64_t chunksOf(const OrderShape &shape) {
  return (shape.stages + shape.workers - 1) / shape.workers;
}

/// A full backward, or its input half followed at once by its weight half.
static void appendBackward(std::vector<JobCoord> &out, const OrderShape &shape,
                           int64_t s, int64_t b) {
  out.push_back({s, b, Direction::Backward});
  if (shape.splitBackward)
    out.push_back({s, b, Direction::BackwardWeight});
}

/// Interleaved 1F1B on rank r: the forward table takes microbatches in
/// rounds of `group` through chunk 0, 1, ..., v-1 (the last round may be
/// short); the backward table walks the same rounds with the chunks
/// reversed. 2(W - r - 1) + (v - 1) * group warm-up forwards, then one
/// forward one backward, then the remaining backwards. With group = W this
/// is Megatron-core's sequence; torch's `Interleaved1F1B` uses
/// group = B / max(1, B / W).
static std::vector<JobCoord> interleavedRank(const OrderShape &shape,
                                             int64_t rank) {
  int64_t W = shape.workers, B = shape.microbatches, v = chunksOf(shape);
  int64_t group = shape.group > 0 ? shape.group : W;
  std::vector<JobCoord> forwards, backwards;
  for (int64_t start = 0; start < B; start += group) {
    int64_t end = std::min(B, start + group);
    for (int64_t c = 0; c < v; ++c)
      for (int64_t b = start; b < end; ++b) {
        int64_t forwardStage = c * W + rank, backwardStage = (v - 1 - c) * W + rank;
        if (forwardStage < shape.stages)
          forwards.push_back({forwardStage, b, Direction::Forward});
        if (backwardStage < shape.stages)
          backwards.push_back({backwardStage, b, Direction::Backward});
      }
  }
  int64_t total = int64_t(forwards.size());
  int64_t warmup = std::min(2 * (W - rank - 1) + (v - 1) * group, total);
  std::vector<JobCoord> out;
  out.reserve(size_t(total) * (shape.splitBackward ? 3 : 2));
  for (int64_t k = 0; k < warmup; ++k)
    out.push_back(forwards[size_t(k)]);
  for (int64_t k = 0; k < total; ++k) {
    if (warmup + k < total)
      out.push_back(forwards[size_t(warmup + k)]);
    const JobCoord &b = backwards[size_t(k)];
    appendBackward(out, shape, b.stage, b.microbatch);
  }
  return out;
}

std::string pipesched::scheduling::checkStaticOrder(StaticOrder order,
                                                    const OrderShape &shape) {
  if (shape.stages < 1 || shape.microbatches < 1 || shape.workers < 1)
    return "the shape needs at least one stage, microbatch and worker";
  switch (order) {
  case StaticOrder::Interleaved:
    if (shape.group < 0)
      return "the interleaved round size must be positive";
    return "";
  }
  return "unknown static order";
}

WorkerOrders pipesched::scheduling::generateStaticOrder(StaticOrder order,
                                                        const OrderShape &shape) {
  WorkerOrders orders(size_t(shape.workers));
  for (int64_t r = 0; r < shape.workers; ++r) {
    switch (order) {
    case StaticOrder::Interleaved:
      orders[size_t(r)] = interleavedRank(shape, r);
      break;
    }
  }
  return orders;
}

std::string pipesched::scheduling::verifyStaticOrder(const OrderShape &shape,
                                                     const WorkerOrders &orders) {
  int64_t perPair = shape.splitBackward ? 3 : 2;
  int64_t total = shape.stages * shape.microbatches * perPair;
  // (worker, index) of every listed job; worker -1 = not listed yet.
  std::vector<std::pair<int64_t, int64_t>> at(size_t(total), {-1, 0});
  auto name = [](const JobCoord &job) {
    return "(" + std::to_string(job.stage) + ", " +
           std::to_string(job.microbatch) + ")";
  };
  int64_t count = 0;
  for (size_t w = 0; w < orders.size(); ++w)
    for (size_t k = 0; k < orders[w].size(); ++k) {
      const JobCoord &job = orders[w][k];
      if (job.stage < 0 || job.stage >= shape.stages || job.microbatch < 0 ||
          job.microbatch >= shape.microbatches ||
          (job.direction == Direction::BackwardWeight && !shape.splitBackward))
        return "worker " + std::to_string(w) + " lists a job outside the step";
      auto &slot = at[size_t(jobCoordIndex(shape.microbatches, perPair, job))];
      if (slot.first >= 0)
        return "job " + name(job) + " appears twice";
      slot = {int64_t(w), int64_t(k)};
      ++count;
    }
  if (count != total)
    return std::to_string(total - count) + " of " + std::to_string(total) +
           " jobs are in no worker's order";
  // A backward on its forward's worker must come after it (one on another
  // worker waits for the data instead).
  for (size_t w = 0; w < orders.size(); ++w)
    for (size_t k = 0; k < orders[w].size(); ++k) {
      const JobCoord &job = orders[w][k];
      if (job.direction == Direction::Forward)
        continue;
      JobCoord forward{job.stage, job.microbatch, Direction::Forward};
      auto f = at[size_t(jobCoordIndex(shape.microbatches, perPair, forward))];
      if (f.first == int64_t(w) && f.second > int64_t(k))
        return "worker " + std::to_string(w) + " runs a backward of " +
               name(job) + " before its forward";
    }
  return "";
}

std::vector<int64_t>
pipesched::scheduling::staticPositions(const OrderShape &shape,
                                       const WorkerOrders &orders) {
  int64_t perPair = shape.splitBackward ? 3 : 2;
  std::vector<int64_t> position(
      size_t(shape.stages * shape.microbatches * perPair), 0);
  for (const std::vector<JobCoord> &list : orders)
    for (size_t k = 0; k < list.size(); ++k)
      position[size_t(jobCoordIndex(shape.microbatches, perPair, list[k]))] =
          int64_t(k);
  return position;
}
