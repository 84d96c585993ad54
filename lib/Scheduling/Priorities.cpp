//===- Priorities.cpp - the priority n(s, b, d) of the master schedule ----===//

#include "pipesched/Scheduling/Priorities.h"

#include <algorithm>

using namespace pipesched::scheduling;

/// How far along its microbatch's forward-backward sweep a job is, in
/// [0, 3S): forwards 0..S-1, backwards S..2S-1, weight-gradients 2S..3S-1.
static int64_t progress(int64_t S, int64_t s, Direction d) {
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

/// The position of job (s, b, d) in Megatron-core's interleaved 1F1B
/// sequence for rank r = s mod W with v = ceil(S / W) chunks: the schedule
/// table takes microbatches in groups of W (the last group may be short)
/// through chunk 0, 1, ..., v-1; rank r runs 2(W - r - 1) + (v - 1) W
/// warm-up forwards, then alternates one forward and one backward, then
/// drains the backwards, which walk the same table with chunks reversed.
static int64_t interleavedPosition(int64_t S, int64_t B, int64_t W, int64_t s,
                                   int64_t b, Direction d) {
  int64_t chunks = (S + W - 1) / W, rank = s % W, chunk = s / W;
  if (d != Direction::Forward)
    chunk = chunks - 1 - chunk;
  int64_t groupStart = b / W * W, groupSize = std::min(W, B - groupStart);
  int64_t k = groupStart * chunks + chunk * groupSize + (b - groupStart);
  int64_t total = B * chunks;
  int64_t warmup = std::min(2 * (W - rank - 1) + (chunks - 1) * W, total);
  int64_t steady = total - warmup;
  int64_t position;
  if (d == Direction::Forward)
    position = k < warmup ? k : warmup + 2 * (k - warmup);
  else
    position = k < steady ? warmup + 2 * k + 1 : total + k;
  // The weight-gradient half of a split backward right after its input half.
  return position * 2 + (d == Direction::BackwardWeight ? 1 : 0);
}

int64_t pipesched::scheduling::priorityOf(Priority policy, int64_t S,
                                          int64_t B, int64_t W, int64_t s,
                                          int64_t b, Direction d) {
  bool isForward = d == Direction::Forward;
  int64_t sweep = 3 * S, p = progress(S, s, d);
  switch (policy) {
  case Priority::FillDrain:
    return ((isForward ? 0 : B) + b) * sweep + p;
  case Priority::BackwardFirst:
    return ((isForward ? B : 0) + b) * sweep + p;
  case Priority::DepthFirst:
    return b * sweep + p;
  case Priority::BreadthFirst:
    return p * B + b;
  case Priority::Interleaved:
    return interleavedPosition(S, B, W, s, b, d);
  }
  return 0;
}
