//===- ZeroBubbleGreedy.cpp - the Zero Bubble repository's greedy order ---===//

#include "pipesched/Scheduling/ZeroBubbleGreedy.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

using namespace pipesched::scheduling;

namespace {

constexpr int64_t kMaxCost = int64_t(1) << 32;
constexpr int64_t kMaxPairs = int64_t(1) << 24;
constexpr int64_t kNotDone = -1;

enum Kind : int { KF = 0, KB = 1, KW = 2 };

struct Flags {
  bool allowBubbleBeforeFirstB, prioritizeB, noBubbleGreedy;
};

/// One run of the greedy for one combination of flags. Times stay below
/// 3pm * (2 * 2^32) < 2^63: every job ends at most one cost plus one comm
/// after an earlier job.
class GreedyRun {
public:
  GreedyRun(int64_t numStages, int64_t numMicrobatches, int64_t memoryLimit,
            const ZeroBubbleCosts &costs, Flags runFlags)
      : p(numStages), m(numMicrobatches),
        limit(memoryLimit * costs.activation),
        cost{costs.forward, costs.input, costs.weight},
        mem{costs.activation, costs.kept - costs.activation, -costs.kept},
        comm(costs.comm), flags(runFlags), live(size_t(p), 0),
        end(size_t(p), 0), bubble(size_t(p), 0), lastWeight(size_t(p), 0),
        doneForward(size_t(p * m), kNotDone),
        doneInput(size_t(p * m), kNotDone), kinds(size_t(3 * p * m)) {
    for (auto &perStage : count)
      perStage.assign(size_t(p), 0);
  }

  /// Places every job; false when the greedy cannot go on (never for
  /// limit >= 1, kept so that a broken invariant cannot loop or crash).
  bool run();

  /// The longest per-rank span, first forward start to last weight end.
  int64_t span() const {
    int64_t best = 0;
    for (int64_t s = 0; s < p; ++s)
      best =
          std::max(best, lastWeight[size_t(s)] - forwardEnd(s, 0) + cost[KF]);
    return best;
  }

  /// Each rank's jobs in placement order. The i-th job of a kind on a rank
  /// is microbatch i, so the kinds alone name them.
  WorkerOrders orders() const;

private:
  int64_t &cnt(Kind k, int64_t s) { return count[k][size_t(s)]; }
  // Indexed b * p + s: a round touches neighbouring entries.
  int64_t forwardEnd(int64_t s, int64_t b) const {
    return doneForward[size_t(b * p + s)];
  }
  int64_t inputEnd(int64_t s, int64_t b) const {
    return doneInput[size_t(b * p + s)];
  }
  /// Whether a gap of `gap` before the next job is within the rank's slack
  /// against the worst bubble so far.
  bool withinSlack(int64_t s, int64_t gap) const {
    return gap <= maxBubble - bubble[size_t(s)];
  }

  bool put(int64_t s, Kind k);
  bool freeMemoryFor(int64_t s, int64_t delta);
  bool fillWeights(int64_t s, int64_t arrival);
  void warmUp();
  bool steadyRound(int64_t i);

  const int64_t p, m, limit;
  const std::array<int64_t, 3> cost;
  /// What each kind adds to a rank's live memory (F takes, B and W free).
  const std::array<int64_t, 3> mem;
  const int64_t comm;
  const Flags flags;
  std::array<std::vector<int64_t>, 3> count;
  std::vector<int64_t> live, end, bubble, lastWeight;
  // Bubbles only grow, so their maximum is kept as it changes.
  int64_t maxBubble = 0;
  std::vector<int64_t> doneForward, doneInput; // end times by b * p + s
  // Rank s's k-th job is kinds[s * 3m + k]: a byte per job; JobCoords are
  // built only for the run that wins.
  std::vector<uint8_t> kinds;
};

bool GreedyRun::put(int64_t s, Kind k) {
  int64_t b = cnt(k, s);
  // A job past the last microbatch, a B before its F or a W before its B
  // would be an invalid order: refuse it rather than emit it.
  if (b >= m || (k == KB && cnt(KF, s) <= b) || (k == KW && cnt(KB, s) <= b))
    return false;
  int64_t unblocked = end[size_t(s)] + cost[k], finish = unblocked;
  int64_t dependency = kNotDone;
  if (k == KF && s > 0)
    dependency = forwardEnd(s - 1, b);
  else if (k == KB && s + 1 < p)
    dependency = inputEnd(s + 1, b);
  if (dependency != kNotDone)
    finish = std::max(finish, dependency + comm + cost[k]);
  // Idle time before a rank's first forward is the pipeline's fill, not a
  // bubble of this order.
  if (cnt(KF, s) > 0) {
    bubble[size_t(s)] += finish - unblocked;
    maxBubble = std::max(maxBubble, bubble[size_t(s)]);
  }
  end[size_t(s)] = finish;
  if (k == KF)
    doneForward[size_t(b * p + s)] = finish;
  else if (k == KB)
    doneInput[size_t(b * p + s)] = finish;
  else
    lastWeight[size_t(s)] = finish;
  live[size_t(s)] += mem[k];
  kinds[size_t(s * 3 * m + cnt(KF, s) + cnt(KB, s) + cnt(KW, s))] = uint8_t(k);
  ++cnt(k, s);
  return true;
}

WorkerOrders GreedyRun::orders() const {
  static constexpr Direction direction[] = {
      Direction::Forward, Direction::Backward, Direction::BackwardWeight};
  WorkerOrders out(static_cast<size_t>(p));
  for (int64_t s = 0; s < p; ++s) {
    std::array<int64_t, 3> next{0, 0, 0};
    out[size_t(s)].reserve(size_t(3 * m));
    for (int64_t k = 0; k < 3 * m; ++k) {
      uint8_t kind = kinds[size_t(s * 3 * m + k)];
      out[size_t(s)].push_back({s, next[kind]++, direction[kind]});
    }
  }
  return out;
}

/// Weight halves until a job adding `delta` to the live memory fits.
bool GreedyRun::freeMemoryFor(int64_t s, int64_t delta) {
  while (live[size_t(s)] + delta > limit)
    if (!put(s, KW))
      return false; // no pending W: the repository's "Cannot fit memory"
  return true;
}

/// Fills the wait for an input arriving at `arrival` with weight halves:
/// every one that ends by then, and one more that overhangs it when the
/// idle gap would exceed the rank's slack (or always, noBubbleGreedy).
bool GreedyRun::fillWeights(int64_t s, int64_t arrival) {
  auto pending = [&] { return cnt(KW, s) < cnt(KB, s); };
  while (pending() && end[size_t(s)] + cost[KW] <= arrival)
    if (!put(s, KW))
      return false;
  if (pending() && end[size_t(s)] < arrival &&
      (flags.noBubbleGreedy || !withinSlack(s, arrival - end[size_t(s)])))
    return put(s, KW);
  return true;
}

void GreedyRun::warmUp() {
  for (int64_t s = 0; s < p; ++s)
    put(s, KF);
  // From the last stage back: how many more forwards fit before B_0
  // reaches stage s (arrivalB carries its end time on stage s+1).
  std::vector<int64_t> extra(size_t(p), 0);
  int64_t arrivalB = forwardEnd(p - 1, 0) + cost[KB];
  for (int64_t s = p - 2; s >= 0; --s) {
    int64_t mem = live[size_t(s)], clock = end[size_t(s)];
    int64_t &n = extra[size_t(s)];
    while (cnt(KF, s) + n < m && mem + this->mem[KF] <= limit) {
      if (flags.allowBubbleBeforeFirstB ? clock + cost[KF] > arrivalB + comm
                                        : clock >= arrivalB + comm)
        break;
      mem += this->mem[KF];
      clock += cost[KF];
      ++n;
    }
    arrivalB = std::max(clock, arrivalB + comm) + cost[KB];
  }
  // A stage warms up strictly less than its predecessor, unless that would
  // leave it with forwards it can no longer run ahead of time.
  for (int64_t s = 1; s < p; ++s) {
    int64_t &n = extra[size_t(s)];
    while (n > 0 && n >= extra[size_t(s - 1)] && cnt(KF, s) + n < m)
      --n;
  }
  for (int64_t s = 0; s < p; ++s)
    for (int64_t k = 0; k < extra[size_t(s)]; ++k)
      put(s, KF);
  for (int64_t s = p - 1; s >= 0; --s)
    put(s, KB);
}

bool GreedyRun::steadyRound(int64_t i) {
  std::vector<char> wants(size_t(p), 0);
  for (int64_t s = 0; s < p; ++s) {
    if (cnt(KF, s) >= m)
      continue;
    if (flags.prioritizeB && s + 1 < p && cnt(KF, s) >= cnt(KF, s + 1) + 2) {
      // The successor's next F and B, plus the transfer, bound how long
      // this rank may spend before it must serve the next B.
      int64_t horizon = end[size_t(s + 1)] + cost[KF] + cost[KB] + comm;
      if (end[size_t(s)] >= horizon)
        continue;
      int64_t weightCost = 0, held = live[size_t(s)] + mem[KF];
      for (int64_t w = cnt(KW, s); held > limit && w < cnt(KB, s); ++w) {
        weightCost += cost[KW];
        held += mem[KW];
      }
      if (end[size_t(s)] + cost[KF] + weightCost > horizon &&
          withinSlack(s, horizon - end[size_t(s)]))
        continue;
    }
    wants[size_t(s)] = 1;
  }
  // An upstream stage only runs ahead when its successor keeps pace.
  for (int64_t s = p - 2; s >= 0; --s)
    wants[size_t(s)] = std::min(wants[size_t(s)], wants[size_t(s + 1)]);
  for (int64_t s = 0; s < p; ++s) {
    if (!wants[size_t(s)])
      continue;
    if (!freeMemoryFor(s, mem[KF]))
      return false;
    if (s > 0) {
      int64_t input = forwardEnd(s - 1, cnt(KF, s));
      if (input != kNotDone && !fillWeights(s, input + comm))
        return false;
    }
    if (!put(s, KF))
      return false;
  }
  for (int64_t s = p - 1; s >= 0; --s) {
    if (cnt(KB, s) != i || !freeMemoryFor(s, mem[KB]))
      return false;
    if (s + 1 < p && !fillWeights(s, inputEnd(s + 1, i) + comm))
      return false;
    if (s == 0 && cnt(KF, s) == m)
      while (cnt(KW, s) < cnt(KB, s))
        if (!put(s, KW))
          return false;
    if (!put(s, KB))
      return false;
  }
  return true;
}

bool GreedyRun::run() {
  warmUp();
  for (int64_t i = 1; i < m; ++i)
    if (!steadyRound(i))
      return false;
  for (int64_t s = 0; s < p; ++s)
    while (cnt(KW, s) < m)
      if (!put(s, KW))
        return false;
  return true; // every rank has m of each kind: the loop above checked W
}

} // namespace

WorkerOrders pipesched::scheduling::zeroBubbleGreedy(
    int64_t p, int64_t m, int64_t memoryLimit, const ZeroBubbleCosts &costs) {
  if (p < 1 || m < 1 || p > kMaxPairs / m)
    return {};
  auto clampCost = [](int64_t c) {
    return std::clamp<int64_t>(c, 0, kMaxCost);
  };
  ZeroBubbleCosts c{clampCost(costs.forward), clampCost(costs.input),
                    clampCost(costs.weight), clampCost(costs.comm)};
  // Memory in any unit, at most 2^32 per activation so that m of them stay
  // far below 2^63; the weight half keeps a part of it.
  c.activation = clampCost(costs.activation);
  c.kept = std::clamp<int64_t>(costs.kept, 0, c.activation);
  // A rank never holds more than m activations, so limits from m up behave
  // alike; below 1 the repository cannot place a second forward.
  int64_t limit = std::clamp<int64_t>(memoryLimit, 1, m);
  std::unique_ptr<GreedyRun> best;
  for (bool allowBubble : {true, false})
    for (bool prioritizeB : {true, false})
      for (bool noBubbleGreedy : {true, false}) {
        auto run = std::make_unique<GreedyRun>(
            p, m, limit, c, Flags{allowBubble, prioritizeB, noBubbleGreedy});
        // Strictly shorter: ties keep the earlier combination.
        if (run->run() && (!best || run->span() < best->span()))
          best = std::move(run);
      }
  return best ? best->orders() : WorkerOrders{};
}
