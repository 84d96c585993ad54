//===- PrioritiesTest.cpp - keys and static orders without MLIR ----------===//

#include "pipesched/Scheduling/Priorities.h"

#include "OrderText.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace pipesched::scheduling;

TEST(Priorities, SweepPositionWalksForwardThenBack) {
  const int64_t S = 4;
  EXPECT_EQ(sweepPosition(S, 0, Direction::Forward), 0);
  EXPECT_EQ(sweepPosition(S, 3, Direction::Forward), 3);
  EXPECT_EQ(sweepPosition(S, 3, Direction::Backward), 4);
  EXPECT_EQ(sweepPosition(S, 0, Direction::Backward), 7);
  EXPECT_EQ(sweepPosition(S, 3, Direction::BackwardWeight), 8);
  EXPECT_EQ(sweepPosition(S, 0, Direction::BackwardWeight), 11);
}

TEST(Priorities, RankKeysIsLexicographicAndDense) {
  // Rows (1, 5), (0, 9), (1, 2), (0, 9): ranks 2, 0, 1, 0.
  std::vector<int64_t> keys = {1, 5, 0, 9, 1, 2, 0, 9};
  EXPECT_EQ(rankKeys(keys, 2), (std::vector<int64_t>{2, 0, 1, 0}));
  EXPECT_TRUE(rankKeys({}, 3).empty());
}


// Megatron-core's interleaved schedule, p = 2, v = 2, m = 4 (rounds of p):
// rank r runs 2(p-r-1) + (v-1)p warm-up forwards, then one forward one
// backward, then drains.
TEST(Priorities, InterleavedIsMegatronsSequence) {
  OrderShape shape{/*stages=*/4, /*microbatches=*/4, /*workers=*/2};
  ASSERT_EQ(checkStaticOrder(StaticOrder::Interleaved, shape), "");
  WorkerOrders orders = generateStaticOrder(StaticOrder::Interleaved, shape);
  EXPECT_EQ(verifyStaticOrder(shape, orders), "");
  EXPECT_EQ(renderOrder(orders[0]),
            "0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3");
  EXPECT_EQ(renderOrder(orders[1]),
            "1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3");
}

// torch's Interleaved1F1B, p = 4, v = 2, m = 10: max(1, m/p) = 2 rounds of
// 5 microbatches (torch 00722e64, schedules.py `_get_1f1b_rank_ops`; idle
// slots dropped).
TEST(Priorities, InterleavedWithTorchRounds) {
  OrderShape shape{8, 10, 4};
  shape.group = 5;
  WorkerOrders orders = generateStaticOrder(StaticOrder::Interleaved, shape);
  EXPECT_EQ(verifyStaticOrder(shape, orders), "");
  EXPECT_EQ(renderOrder(orders[3]),
            "3F0 3F1 3F2 3F3 3F4 7F0 7B0 7F1 7B1 7F2 7B2 7F3 7B3 7F4 7B4 3F5 "
            "3B0 3F6 3B1 3F7 3B2 3F8 3B3 3F9 3B4 7F5 7B5 7F6 7B6 7F7 7B7 7F8 "
            "7B8 7F9 7B9 3B5 3B6 3B7 3B8 3B9");
}

TEST(Priorities, SplitBackwardFollowsItsInputHalf) {
  OrderShape shape{2, 1, 2};
  shape.splitBackward = true;
  WorkerOrders orders = generateStaticOrder(StaticOrder::Interleaved, shape);
  EXPECT_EQ(verifyStaticOrder(shape, orders), "");
  EXPECT_EQ(renderOrder(orders[0]), "0F0 0B0 0W0");
}

TEST(Priorities, VerifyRejectsMissingRepeatedAndEarlyJobs) {
  OrderShape shape{1, 2, 1};
  JobCoord f0{0, 0, Direction::Forward}, b0{0, 0, Direction::Backward},
      f1{0, 1, Direction::Forward}, b1{0, 1, Direction::Backward};
  EXPECT_EQ(verifyStaticOrder(shape, {{f0, b0, f1, b1}}), "");
  EXPECT_EQ(verifyStaticOrder(shape, {{f0, b0, f1}}),
            "1 of 4 jobs are in no worker's order");
  EXPECT_EQ(verifyStaticOrder(shape, {{f0, b0, f1, b1, b1}}),
            "job (0, 1) appears twice");
  EXPECT_EQ(verifyStaticOrder(shape, {{b0, f0, f1, b1}}),
            "worker 0 runs a backward of (0, 0) before its forward");
  EXPECT_EQ(verifyStaticOrder(shape, {{f0, b0, f1, {0, 2, Direction::Forward}}}),
            "worker 0 lists a job outside the step");
}
