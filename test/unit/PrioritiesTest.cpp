//===- PrioritiesTest.cpp - n(s, b, d) without MLIR -----------------------===//

#include "pipesched/Scheduling/Priorities.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

using namespace pipesched::scheduling;

TEST(Priorities, FillDrainRunsEveryForwardFirst) {
  const int64_t S = 3, B = 4, W = 3;
  int64_t lastForward = -1, firstBackward = INT64_MAX;
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < B; ++b) {
      lastForward = std::max(lastForward, priorityOf(Priority::FillDrain, S, B, W,
                                                     s, b, Direction::Forward));
      firstBackward = std::min(firstBackward,
                               priorityOf(Priority::FillDrain, S, B, W, s, b,
                                          Direction::Backward));
    }
  EXPECT_LT(lastForward, firstBackward);
}

TEST(Priorities, BackwardFirstPrefersAnyBackward) {
  const int64_t S = 4, B = 8, W = 4;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < B; ++c)
      EXPECT_LT(priorityOf(Priority::BackwardFirst, S, B, W, 0, b,
                           Direction::Backward),
                priorityOf(Priority::BackwardFirst, S, B, W, 0, c,
                           Direction::Forward));
}

// Megatron's interleaved sequence, p = 4 ranks, v = 2 chunks, m = 8: each
// rank's positions are distinct, rank r runs 2(p-r-1) + (v-1)p warm-up
// forwards and then one forward one backward, and every job's backward
// comes after its forward.
TEST(Priorities, InterleavedIsMegatronsSequence) {
  const int64_t W = 4, S = 8, B = 8, chunks = 2;
  for (int64_t r = 0; r < W; ++r) {
    std::vector<std::pair<int64_t, Direction>> order;
    std::set<int64_t> seen;
    for (int64_t chunk = 0; chunk < chunks; ++chunk)
      for (int64_t b = 0; b < B; ++b)
        for (Direction d : {Direction::Forward, Direction::Backward}) {
          int64_t s = chunk * W + r;
          int64_t n = priorityOf(Priority::Interleaved, S, B, W, s, b, d);
          EXPECT_TRUE(seen.insert(n).second);
          order.push_back({n, d});
          if (d == Direction::Backward) {
            EXPECT_GT(n, priorityOf(Priority::Interleaved, S, B, W, s, b,
                                    Direction::Forward));
          }
        }
    std::sort(order.begin(), order.end(),
              [](auto &a, auto &b) { return a.first < b.first; });
    int64_t warmup = 0;
    while (order[size_t(warmup)].second == Direction::Forward)
      ++warmup;
    // The warm-up forwards, then the steady state's first forward.
    EXPECT_EQ(warmup, 2 * (W - r - 1) + (chunks - 1) * W + 1) << "rank " << r;
  }
  EXPECT_TRUE(isStaticOrder(Priority::Interleaved));
  EXPECT_FALSE(isStaticOrder(Priority::BackwardFirst));
}
