//===- Priorities.cpp - the priority n(s, b, d) of the master schedule ----===//

#include "pipesched/Scheduling/Priorities.h"

#include "pipesched/Scheduling/VShapeGreedy.h"
#include "pipesched/Scheduling/ZeroBubbleGreedy.h"

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
  case Direction::Scan: // where the backward of its stage would be
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

/// torch's rounds for the interleaved zero-bubble order: max(1, B / W)
/// rounds of B / rounds microbatches.
static int64_t torchRoundSize(const OrderShape &shape) {
  int64_t rounds = std::max<int64_t>(1, shape.microbatches / shape.workers);
  return shape.microbatches / rounds;
}

/// torch's `_get_1f1b_rank_ops` with zero bubble on rank r (schedules.py of
/// torch 00722e64): (v-1)*group + (W-1-r) warm-up forwards; then each step
/// one forward and one input-gradient half, with the weight-gradient half
/// of the oldest pending backward once r steps have passed; then the
/// remaining input halves, each with a weight half; then the remaining
/// weight halves. Microbatch indices count per stage.
static std::vector<JobCoord> zeroBubbleRank(const OrderShape &shape,
                                            int64_t rank) {
  int64_t W = shape.workers, B = shape.microbatches, v = chunksOf(shape);
  int64_t group = shape.group > 0 ? shape.group : torchRoundSize(shape);
  int64_t total = v * B;
  int64_t warmup = std::min((v - 1) * group + (W - 1 - rank), total);
  auto forwardStage = [&](int64_t op) { return (op / group % v) * W + rank; };
  auto backwardStage = [&](int64_t op) {
    return (v - 1 - (op - warmup) / group % v) * W + rank;
  };
  std::vector<int64_t> forwards(size_t(shape.stages), 0),
      backwards(size_t(shape.stages), 0), weights(size_t(shape.stages), 0);
  std::vector<int64_t> pending; // stages of input halves awaiting weights
  size_t nextWeight = 0;
  std::vector<JobCoord> out;
  auto forward = [&](int64_t op) {
    int64_t s = forwardStage(op);
    out.push_back({s, forwards[size_t(s)]++, Direction::Forward});
  };
  auto input = [&](int64_t op) {
    int64_t s = backwardStage(op);
    out.push_back({s, backwards[size_t(s)]++, Direction::Backward});
    pending.push_back(s);
  };
  auto weight = [&] {
    int64_t s = pending[nextWeight++];
    out.push_back({s, weights[size_t(s)]++, Direction::BackwardWeight});
  };
  for (int64_t op = 0; op < warmup; ++op)
    forward(op);
  for (int64_t op = warmup; op < total + warmup; ++op) {
    if (op < total)
      forward(op);
    input(op);
    if (op - warmup >= rank)
      weight();
  }
  while (nextWeight < pending.size())
    weight();
  return out;
}

/// torch's `ScheduleLoopedBFS` on rank r: the forwards of each of its
/// stages in turn, then the backwards of its stages from the highest, each
/// stage's microbatches in reverse order.
static std::vector<JobCoord> loopedBfsRank(const OrderShape &shape,
                                           int64_t rank) {
  std::vector<JobCoord> out;
  for (int64_t s = rank; s < shape.stages; s += shape.workers)
    for (int64_t b = 0; b < shape.microbatches; ++b)
      out.push_back({s, b, Direction::Forward});
  int64_t last = rank + (chunksOf(shape) - 1) * shape.workers;
  for (int64_t s = last; s >= 0; s -= shape.workers) {
    if (s >= shape.stages)
      continue;
    for (int64_t b = shape.microbatches - 1; b >= 0; --b)
      appendBackward(out, shape, s, b);
  }
  return out;
}

/// torch's `ScheduleZBVZeroBubble` on rank r of p (schedules.py of torch
/// 00722e64): chunk 0 is stage r, chunk 1 stage 2p-1-r; the pattern is
/// written for max(2p-1, B) microbatches and the ones past B are dropped.
static std::vector<JobCoord> zeroBubbleVRank(const OrderShape &shape,
                                             int64_t rank) {
  int64_t p = shape.workers, B = shape.microbatches;
  int64_t padded = std::max(2 * p - 1, B);
  int64_t c0 = rank, c1 = 2 * p - 1 - rank;
  int64_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  std::vector<JobCoord> out;
  auto emit = [&](int64_t s, int64_t b, Direction d) {
    if (b < B)
      out.push_back({s, b, d});
  };
  auto backwardPair = [&](int64_t s, int64_t &b) {
    emit(s, b, Direction::Backward);
    emit(s, b, Direction::BackwardWeight);
    ++b;
  };
  for (int64_t i = 0; i < 2 * (p - rank) - 1; ++i)
    emit(c0, f0++, Direction::Forward);
  for (int64_t i = 0; i < rank; ++i) {
    emit(c1, f1++, Direction::Forward);
    emit(c0, f0++, Direction::Forward);
  }
  for (int64_t i = 0; i < p - rank; ++i) {
    emit(c1, f1++, Direction::Forward);
    backwardPair(c1, b1);
  }
  while (f1 < f0 || f0 < padded) {
    if (f0 < padded)
      emit(c0, f0++, Direction::Forward);
    backwardPair(c0, b0);
    emit(c1, f1++, Direction::Forward);
    backwardPair(c1, b1);
  }
  int64_t w0 = b0, w1 = b1;
  for (int64_t i = 0; i < rank; ++i) {
    emit(c0, b0++, Direction::Backward);
    emit(c1, b1++, Direction::Backward);
  }
  for (int64_t i = 0; i < p - rank; ++i) {
    emit(c0, b0++, Direction::Backward);
    emit(c0, w0++, Direction::BackwardWeight);
  }
  while (w1 < b1)
    emit(c1, w1++, Direction::BackwardWeight);
  while (w0 < b0)
    emit(c0, w0++, Direction::BackwardWeight);
  return out;
}

/// DualPipeV on rank r of p (torch 00722e64 `ScheduleDualPipeV`, the same
/// order as deepseek-ai/DualPipe 3da1bbea `dualpipev.py`): chunk 0 is stage
/// r, chunk 1 stage 2p-1-r; microbatches count per stage and kind. A
/// zero-bubble backward (input half) queues its weight half, which a later
/// `W` slot runs; a whole backward runs both at once; an overlapped pair
/// fuses a forward of one chunk with a whole backward of the other.
static std::vector<JobCoord> dualPipeVRank(const OrderShape &shape,
                                           int64_t rank) {
  int64_t p = shape.workers, B = shape.microbatches;
  int64_t s0 = rank, s1 = 2 * p - 1 - rank;
  std::vector<int64_t> forwards(size_t(shape.stages), 0),
      backwards(size_t(shape.stages), 0);
  std::vector<JobCoord> out, weightQueue;
  size_t nextWeight = 0;
  auto forward = [&](int64_t s, bool overlapped = false) {
    JobCoord job{s, forwards[size_t(s)]++, Direction::Forward};
    job.overlapped = overlapped;
    out.push_back(job);
  };
  auto input = [&](int64_t s) { // zero bubble: the weight half waits
    JobCoord job{s, backwards[size_t(s)]++, Direction::Backward};
    out.push_back(job);
    weightQueue.push_back({s, job.microbatch, Direction::BackwardWeight});
  };
  auto whole = [&](int64_t s) {
    JobCoord job{s, backwards[size_t(s)]++, Direction::Backward};
    job.whole = true;
    out.push_back(job);
    out.push_back({s, job.microbatch, Direction::BackwardWeight});
  };
  auto weight = [&] {
    if (nextWeight < weightQueue.size())
      out.push_back(weightQueue[nextWeight++]);
  };
  auto pair = [&](int64_t forwardStage, int64_t backwardStage) {
    forward(forwardStage, /*overlapped=*/true);
    whole(backwardStage);
  };
  for (int64_t i = 0; i < 2 * (p - rank - 1); ++i)
    forward(s0);
  for (int64_t i = 0; i < rank + 1; ++i) {
    forward(s0);
    forward(s1);
  }
  for (int64_t i = 0; i < p - rank - 1; ++i) {
    input(s1);
    weight();
    forward(s1);
  }
  for (int64_t i = 0; i < B - 2 * p + rank + 1; ++i) {
    if (i == 0 && rank == p - 1) {
      forward(s0);
      whole(s1);
    } else {
      pair(s0, s1);
    }
    pair(s1, s0);
  }
  for (int64_t i = 0; i < p - rank - 1; ++i) {
    whole(s1);
    pair(s1, s0);
  }
  bool zeroBubble = false;
  int64_t half = (rank + 1) / 2;
  for (int64_t i = 0; i < rank + 1; ++i) {
    if (i == half && rank % 2 == 1)
      zeroBubble = true;
    zeroBubble ? input(s1) : whole(s1);
    if (i == half && rank % 2 == 0)
      zeroBubble = true;
    zeroBubble ? input(s0) : whole(s0);
  }
  for (int64_t i = 0; i < p - rank - 1; ++i) {
    weight();
    zeroBubble ? input(s0) : whole(s0);
  }
  for (int64_t i = 0; i < rank + 1; ++i)
    weight();
  return out;
}

std::string pipesched::scheduling::checkStaticOrder(StaticOrder order,
                                                    const OrderShape &shape) {
  if (shape.stages < 1 || shape.microbatches < 1 || shape.workers < 1)
    return "the shape needs at least one stage, microbatch and worker";
  switch (order) {
  case StaticOrder::Interleaved:
  case StaticOrder::LoopedBFS:
    if (shape.group < 0)
      return "the interleaved round size must be positive";
    return "";
  case StaticOrder::ZeroBubbleH1:
    if (!shape.splitBackward)
      return "the zero-bubble order needs a split backward (a cost with "
             "bwd_w)";
    if (shape.group < 0)
      return "the interleaved round size must be positive";
    if (shape.group == 0 && shape.microbatches % std::max<int64_t>(
                                1, shape.microbatches / shape.workers) != 0)
      return "torch's zero-bubble order needs B (" +
             std::to_string(shape.microbatches) +
             ") to be a multiple of max(1, B / W) rounds";
    return "";
  case StaticOrder::ZeroBubbleV:
    if (!shape.splitBackward)
      return "the zero-bubble order needs a split backward (a cost with "
             "bwd_w)";
    if (shape.stages != 2 * shape.workers)
      return "the V order needs S = 2W stages, got S = " +
             std::to_string(shape.stages) + ", W = " +
             std::to_string(shape.workers);
    return "";
  case StaticOrder::ZeroBubbleH2:
    if (!shape.splitBackward)
      return "the zero-bubble order needs a split backward (a cost with "
             "bwd_w)";
    if (shape.stages != shape.workers)
      return "ZB-H2 runs one stage per worker, got S = " +
             std::to_string(shape.stages) + ", W = " +
             std::to_string(shape.workers);
    if (shape.stages * shape.microbatches > (int64_t(1) << 24))
      return "ZB-H2's greedy scheduler takes at most 2^24 stage-microbatch "
             "pairs";
    return "";
  case StaticOrder::VMin:
  case StaticOrder::VHalf:
    if (!shape.splitBackward)
      return "the V-Min and V-Half orders need a split backward (a cost "
             "with bwd_w)";
    if (shape.stages != 2 * shape.workers)
      return "the V order needs S = 2W stages, got S = " +
             std::to_string(shape.stages) + ", W = " +
             std::to_string(shape.workers);
    return checkVShapeGreedy(shape.workers, shape.microbatches,
                             order == StaticOrder::VMin ? VShapeMemory::Min
                                                        : VShapeMemory::Half);
  case StaticOrder::DualPipeV:
    if (!shape.splitBackward)
      return "DualPipeV needs a split backward (a cost with bwd_w)";
    if (shape.stages != 2 * shape.workers)
      return "the V order needs S = 2W stages, got S = " +
             std::to_string(shape.stages) + ", W = " +
             std::to_string(shape.workers);
    if (shape.microbatches < 2 * shape.workers)
      return "DualPipeV needs B >= 2W microbatches (as DualPipe and torch "
             "do), got B = " +
             std::to_string(shape.microbatches) + ", W = " +
             std::to_string(shape.workers);
    return "";
  }
  return "unknown static order";
}

WorkerOrders pipesched::scheduling::generateStaticOrder(StaticOrder order,
                                                        const OrderShape &shape) {
  if (order == StaticOrder::VMin || order == StaticOrder::VHalf)
    return vShapeGreedy(shape.workers, shape.microbatches,
                        order == StaticOrder::VMin ? VShapeMemory::Min
                                                   : VShapeMemory::Half);
  if (order == StaticOrder::ZeroBubbleH2)
    return zeroBubbleGreedy(shape.workers, shape.microbatches,
                            2 * shape.workers,
                            {shape.forwardCost, shape.inputCost,
                             shape.weightCost, shape.commCost,
                             shape.activationBytes, shape.keptBytes});
  WorkerOrders orders(size_t(shape.workers));
  for (int64_t r = 0; r < shape.workers; ++r) {
    switch (order) {
    case StaticOrder::Interleaved:
      orders[size_t(r)] = interleavedRank(shape, r);
      break;
    case StaticOrder::LoopedBFS:
      orders[size_t(r)] = loopedBfsRank(shape, r);
      break;
    case StaticOrder::ZeroBubbleH1:
      orders[size_t(r)] = zeroBubbleRank(shape, r);
      break;
    case StaticOrder::ZeroBubbleV:
      orders[size_t(r)] = zeroBubbleVRank(shape, r);
      break;
    case StaticOrder::DualPipeV:
      orders[size_t(r)] = dualPipeVRank(shape, r);
      break;
    case StaticOrder::ZeroBubbleH2:
    case StaticOrder::VMin:
    case StaticOrder::VHalf:
      break; // generated whole above
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
