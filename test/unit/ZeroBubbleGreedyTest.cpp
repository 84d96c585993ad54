//===- ZeroBubbleGreedyTest.cpp - Zero Bubble's greedy ZB-1p/ZB-2p --------===//
//
// Expected orders: the greedy of sail-sg/zero-bubble-pipeline-parallelism
// 39f2c186 (megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py),
// evaluated for each shape; one string per rank, {stage}{F|B|W}{mb}, B the
// input-gradient half.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/ZeroBubbleGreedy.h"

#include "OrderText.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace pipesched::scheduling;

namespace {


std::vector<std::string> renderAll(const WorkerOrders &orders) {
  std::vector<std::string> out;
  for (const auto &rank : orders)
    out.push_back(renderOrder(rank));
  return out;
}

OrderShape shapeOf(int64_t p, int64_t m) {
  OrderShape shape{/*stages=*/p, /*microbatches=*/m, /*workers=*/p};
  shape.splitBackward = true;
  return shape;
}

/// Runs the orders with unit durations and no transfer time: a rank starts
/// its next job once the job's inputs exist (F after F of s-1, B after B of
/// s+1 or, on the last stage, its F; W after its B). Returns the makespan,
/// or -1 on a deadlock; `peak` gets each rank's most live memory: F adds
/// `activation`, B frees `activation - kept`, W frees `kept` (by default
/// the count of activations with F done and W not yet).
int64_t replay(int64_t p, int64_t m, const WorkerOrders &orders,
               std::vector<int64_t> &peak, int64_t activation = 1,
               int64_t kept = 1) {
  std::vector<int64_t> done(size_t(3 * p * m), -1);
  auto at = [&](int64_t s, int64_t b, Direction d) -> int64_t & {
    return done[size_t((s * m + b) * 3 + int64_t(d))];
  };
  std::vector<size_t> next(size_t(p), 0);
  std::vector<int64_t> clock(size_t(p), 0), live(size_t(p), 0);
  peak.assign(size_t(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < p; ++r)
      while (next[size_t(r)] < orders[size_t(r)].size()) {
        const JobCoord &j = orders[size_t(r)][next[size_t(r)]];
        int64_t input = 0;
        if (j.direction == Direction::Forward)
          input = j.stage > 0 ? at(j.stage - 1, j.microbatch, j.direction) : 0;
        else if (j.direction == Direction::Backward)
          input = j.stage + 1 < p
                      ? at(j.stage + 1, j.microbatch, j.direction)
                      : at(j.stage, j.microbatch, Direction::Forward);
        else
          input = at(j.stage, j.microbatch, Direction::Backward);
        if (input < 0)
          break;
        clock[size_t(r)] = std::max(clock[size_t(r)], input) + 1;
        at(j.stage, j.microbatch, j.direction) = clock[size_t(r)];
        live[size_t(r)] += j.direction == Direction::Forward ? activation
                           : j.direction == Direction::Backward
                               ? kept - activation
                               : -kept;
        peak[size_t(r)] = std::max(peak[size_t(r)], live[size_t(r)]);
        ++next[size_t(r)];
        progress = true;
      }
  }
  for (int64_t r = 0; r < p; ++r)
    if (next[size_t(r)] != orders[size_t(r)].size())
      return -1;
  return *std::max_element(clock.begin(), clock.end());
}

const std::vector<std::string> kZb2pP4M8 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0B0 0F7 0W0 0B1 0W1 0B2 0W2 0B3 0W3 "
    "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7",
    "1F0 1F1 1F2 1F3 1F4 1B0 1F5 1B1 1F6 1B2 1F7 1B3 1W0 1B4 1W1 1B5 "
    "1W2 1B6 1W3 1B7 1W4 1W5 1W6 1W7",
    "2F0 2F1 2F2 2B0 2F3 2B1 2F4 2B2 2F5 2B3 2F6 2B4 2F7 2B5 2W0 2B6 "
    "2W1 2B7 2W2 2W3 2W4 2W5 2W6 2W7",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 "
    "3W0 3W1 3W2 3W3 3W4 3W5 3W6 3W7"};

const std::vector<std::string> kZb2pP2M4 = {
    "0F0 0F1 0F2 0B0 0F3 0W0 0B1 0W1 0B2 0W2 0B3 0W3",
    "1F0 1B0 1F1 1B1 1F2 1B2 1F3 1B3 1W0 1W1 1W2 1W3"};

const std::vector<std::string> kZb2pP4M12 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0B0 0F7 0B1 0W0 0F8 0B2 0B3 0W1 0F9 "
    "0B4 0B5 0W2 0F10 0B6 0B7 0W3 0F11 0W4 0W5 0W6 0W7 0B8 0W8 0B9 0W9 "
    "0B10 0W10 0B11 0W11",
    "1F0 1F1 1F2 1F3 1F4 1B0 1F5 1B1 1F6 1B2 1F7 1B3 1W0 1F8 1B4 1B5 "
    "1W1 1F9 1B6 1B7 1W2 1F10 1B8 1W3 1F11 1B9 1W4 1W5 1B10 1W6 1W7 "
    "1B11 1W8 1W9 1W10 1W11",
    "2F0 2F1 2F2 2B0 2F3 2B1 2F4 2B2 2F5 2B3 2F6 2B4 2F7 2B5 2W0 2F8 "
    "2B6 2B7 2W1 2F9 2B8 2W2 2F10 2B9 2W3 2F11 2B10 2W4 2W5 2B11 2W6 "
    "2W7 2W8 2W9 2W10 2W11",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 "
    "3W0 3F8 3B8 3W1 3F9 3B9 3W2 3F10 3B10 3W3 3F11 3B11 3W4 3W5 3W6 "
    "3W7 3W8 3W9 3W10 3W11"};

const std::vector<std::string> kZb1pP4M8 = {
    "0F0 0F1 0F2 0F3 0B0 0W0 0F4 0B1 0W1 0F5 0B2 0W2 0F6 0B3 0W3 0F7 "
    "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7",
    "1F0 1F1 1F2 1B0 1F3 1B1 1W0 1F4 1B2 1W1 1F5 1B3 1W2 1F6 1B4 1W3 "
    "1F7 1B5 1W4 1B6 1W5 1B7 1W6 1W7",
    "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2W0 2F4 2B3 2W1 2F5 2B4 2W2 2F6 2B5 "
    "2W3 2F7 2B6 2W4 2B7 2W5 2W6 2W7",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3W0 3F4 3B4 3W1 3F5 3B5 3W2 3F6 "
    "3B6 3W3 3F7 3B7 3W4 3W5 3W6 3W7"};

const std::vector<std::string> kZb1pP3M6 = {
    "0F0 0F1 0F2 0B0 0W0 0F3 0B1 0W1 0F4 0B2 0W2 0F5 0B3 0W3 0B4 0W4 "
    "0B5 0W5",
    "1F0 1F1 1B0 1F2 1B1 1W0 1F3 1B2 1W1 1F4 1B3 1W2 1F5 1B4 1W3 1B5 "
    "1W4 1W5",
    "2F0 2B0 2F1 2B1 2F2 2B2 2W0 2F3 2B3 2W1 2F4 2B4 2W2 2F5 2B5 2W3 "
    "2W4 2W5"};

const std::vector<std::string> kZb2pRuntimeP4M8 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0B0 0F7 0W0 0B1 0W1 0B2 0W2 0B3 0W3 "
    "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7",
    "1F0 1F1 1F2 1F3 1F4 1B0 1F5 1B1 1F6 1B2 1F7 1B3 1W0 1B4 1W1 1B5 "
    "1W2 1B6 1W3 1B7 1W4 1W5 1W6 1W7",
    "2F0 2F1 2F2 2B0 2F3 2B1 2F4 2B2 2F5 2B3 2F6 2B4 2F7 2B5 2W0 2B6 "
    "2W1 2B7 2W2 2W3 2W4 2W5 2W6 2W7",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 "
    "3W0 3W1 3W2 3W3 3W4 3W5 3W6 3W7"};

const std::vector<std::string> kZb2pRuntimeP3M6 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0B0 0W0 0B1 0W1 0B2 0W2 0B3 0W3 0B4 0W4 "
    "0B5 0W5",
    "1F0 1F1 1F2 1F3 1B0 1B1 1F4 1B2 1F5 1B3 1W0 1B4 1W1 1B5 1W2 1W3 "
    "1W4 1W5",
    "2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2F4 2B4 2F5 2B5 2W0 2W1 2W2 2W3 "
    "2W4 2W5"};

// Uneven costs (f, b, w, comm): (1, 1, 3, 2) and (2, 3, 1, 1), limit 2p.
const std::vector<std::string> kUnevenWeightP4M8 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0F7 0B0 0W0 0B1 0W1 0B2 0W2 0B3 0W3 "
    "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7",
    "1F0 1F1 1F2 1F3 1F4 1F5 1F6 1F7 1B0 1W0 1B1 1W1 1B2 1B3 1B4 1W2 "
    "1B5 1B6 1B7 1W3 1W4 1W5 1W6 1W7",
    "2F0 2F1 2F2 2F3 2F4 2F5 2F6 2B0 2F7 2B1 2W0 2B2 2B3 2B4 2W1 2B5 "
    "2B6 2B7 2W2 2W3 2W4 2W5 2W6 2W7",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 "
    "3W0 3W1 3W2 3W3 3W4 3W5 3W6 3W7"};

const std::vector<std::string> kUnevenP4M8 = {
    "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0F7 0B0 0W0 0B1 0W1 0B2 0W2 0B3 0W3 "
    "0B4 0W4 0B5 0W5 0B6 0W6 0B7 0W7",
    "1F0 1F1 1F2 1F3 1F4 1F5 1F6 1F7 1B0 1W0 1B1 1W1 1B2 1W2 1B3 1W3 "
    "1B4 1W4 1B5 1W5 1B6 1W6 1B7 1W7",
    "2F0 2F1 2F2 2F3 2B0 2F4 2B1 2F5 2B2 2F6 2B3 2F7 2B4 2W0 2W1 2B5 "
    "2W2 2W3 2B6 2W4 2W5 2B7 2W6 2W7",
    "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7 "
    "3W0 3W1 3W2 3W3 3W4 3W5 3W6 3W7"};

struct Pinned {
  int64_t p, m, limit;
  ZeroBubbleCosts costs;
  const std::vector<std::string> *expected;
  int64_t makespan; // unit-cost replay
};

} // namespace

// ZB-2p (limit 2p) and ZB-1p (limit p) with unit costs, and the costs the
// repository's runtime schedules with before profiling (1000 each, comm 1):
// the same order at p = 4, m = 8, a different one at p = 3, m = 6; and two
// uneven costs, which reach the greedy's bubble-slack choices.
TEST(ZeroBubbleGreedy, MatchesTheRepositorysOrders) {
  const ZeroBubbleCosts unit;
  const ZeroBubbleCosts runtime{1000, 1000, 1000, 1};
  const Pinned pinned[] = {
      {4, 8, 8, unit, &kZb2pP4M8, 27},
      {2, 4, 4, unit, &kZb2pP2M4, 13},
      {4, 12, 8, unit, &kZb2pP4M12, 39},
      {4, 8, 4, unit, &kZb1pP4M8, 27},
      {3, 6, 3, unit, &kZb1pP3M6, 20},
      {4, 8, 8, runtime, &kZb2pRuntimeP4M8, 27},
      {3, 6, 6, runtime, &kZb2pRuntimeP3M6, 20},
      {4, 8, 8, {1, 1, 3, 2}, &kUnevenWeightP4M8, 27},
      {4, 8, 8, {2, 3, 1, 1}, &kUnevenP4M8, 27},
  };
  for (const Pinned &c : pinned) {
    SCOPED_TRACE("p=" + std::to_string(c.p) + " m=" + std::to_string(c.m) +
                 " limit=" + std::to_string(c.limit) +
                 " costs=" + std::to_string(c.costs.forward) + "," +
                 std::to_string(c.costs.input) + "," +
                 std::to_string(c.costs.weight) + "," +
                 std::to_string(c.costs.comm));
    WorkerOrders orders = zeroBubbleGreedy(c.p, c.m, c.limit, c.costs);
    EXPECT_EQ(renderAll(orders), *c.expected);
    EXPECT_EQ(verifyStaticOrder(shapeOf(c.p, c.m), orders), "");
    std::vector<int64_t> peak;
    EXPECT_EQ(replay(c.p, c.m, orders, peak), c.makespan);
    EXPECT_EQ(*std::max_element(peak.begin(), peak.end()), c.limit);
  }
}

// ZB-1p at p = 4, m = 8 is ZB-H1: 1F1B's memory (p live activations) and
// a makespan of 3m + (p - 1) unit slots.
TEST(ZeroBubbleGreedy, OnePIsZbH1) {
  WorkerOrders orders = zeroBubbleGreedy(4, 8, 4);
  std::vector<int64_t> peak;
  EXPECT_EQ(replay(4, 8, orders, peak), 3 + 3 * 8);
  EXPECT_EQ(peak, (std::vector<int64_t>{4, 4, 4, 4}));
}

// Every shape of the sweep yields a complete order that verifies, replays
// without deadlock, keeps each W after its B and stays within the limit;
// and the same call gives the same order.
TEST(ZeroBubbleGreedy, SweepVerifies) {
  for (int64_t p = 1; p <= 8; ++p)
    for (int64_t m = 1; m <= 24; ++m)
      for (int64_t limit : {p, 2 * p}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) +
                     " limit=" + std::to_string(limit));
        WorkerOrders orders = zeroBubbleGreedy(p, m, limit);
        ASSERT_EQ(orders.size(), size_t(p));
        ASSERT_EQ(verifyStaticOrder(shapeOf(p, m), orders), "");
        for (int64_t r = 0; r < p; ++r) {
          ASSERT_EQ(orders[size_t(r)].size(), size_t(3 * m));
          for (const JobCoord &j : orders[size_t(r)])
            ASSERT_EQ(j.stage, r);
        }
        std::vector<int64_t> peak;
        ASSERT_GT(replay(p, m, orders, peak), 0);
        for (int64_t live : peak)
          ASSERT_LE(live, limit);
        ASSERT_EQ(zeroBubbleGreedy(p, m, limit), orders);
      }
}

// Costs change the order but never its validity.
TEST(ZeroBubbleGreedy, UnevenCostsVerify) {
  const ZeroBubbleCosts costs[] = {
      {1, 2, 1, 0}, {2, 3, 1, 1}, {1, 1, 3, 2}, {0, 1, 0, 0}, {5, 1, 1, 7}};
  for (const ZeroBubbleCosts &c : costs)
    for (int64_t p = 1; p <= 6; ++p)
      for (int64_t m = 1; m <= 12; ++m)
        for (int64_t limit : {int64_t(1), p, 2 * p}) {
          WorkerOrders orders = zeroBubbleGreedy(p, m, limit, c);
          ASSERT_EQ(verifyStaticOrder(shapeOf(p, m), orders), "");
          std::vector<int64_t> peak;
          ASSERT_GT(replay(p, m, orders, peak), 0);
          for (int64_t live : peak)
            ASSERT_LE(live, limit);
        }
}

// The paper's memory model: the input half frees what the weight half
// does not keep. The limit then counts bytes (limit activations of 10
// each), orders stay valid, and with 4 of 10 kept ZB-2p runs forwards
// ahead of weight halves where the whole-activation model could not.
TEST(ZeroBubbleGreedy, PartsStayWithinTheLimit) {
  for (int64_t kept : {0, 4, 10})
    for (int64_t p = 1; p <= 6; ++p)
      for (int64_t m = 1; m <= 12; ++m)
        for (int64_t limit : {p, 2 * p}) {
          SCOPED_TRACE("kept=" + std::to_string(kept) + " p=" +
                       std::to_string(p) + " m=" + std::to_string(m));
          ZeroBubbleCosts costs;
          costs.activation = 10;
          costs.kept = kept;
          WorkerOrders orders = zeroBubbleGreedy(p, m, limit, costs);
          ASSERT_EQ(verifyStaticOrder(shapeOf(p, m), orders), "");
          std::vector<int64_t> peak;
          ASSERT_GT(replay(p, m, orders, peak, 10, kept), 0);
          for (int64_t live : peak)
            ASSERT_LE(live, 10 * limit);
        }
  ZeroBubbleCosts parts;
  parts.activation = 10;
  parts.kept = 4;
  EXPECT_NE(zeroBubbleGreedy(4, 16, 8, parts), zeroBubbleGreedy(4, 16, 8));
  // Kept whole, the parts are the old model in other units.
  parts.kept = 10;
  EXPECT_EQ(zeroBubbleGreedy(4, 16, 8, parts), zeroBubbleGreedy(4, 16, 8));
}

// Out-of-range inputs: no stages or microbatches give no order; limits
// below 1 act as 1 (one live activation: F B W per microbatch), limits
// above m as m; negative or huge costs are clamped.
TEST(ZeroBubbleGreedy, PathologicalInputs) {
  EXPECT_TRUE(zeroBubbleGreedy(0, 4, 4).empty());
  EXPECT_TRUE(zeroBubbleGreedy(4, 0, 4).empty());
  EXPECT_TRUE(zeroBubbleGreedy(-1, -1, 4).empty());
  EXPECT_TRUE(zeroBubbleGreedy(INT64_MAX, INT64_MAX, 4).empty());
  WorkerOrders one = zeroBubbleGreedy(2, 2, 0);
  EXPECT_EQ(renderAll(one),
            (std::vector<std::string>{"0F0 0B0 0W0 0F1 0B1 0W1",
                                      "1F0 1B0 1W0 1F1 1B1 1W1"}));
  EXPECT_EQ(zeroBubbleGreedy(2, 2, INT64_MIN), one);
  EXPECT_EQ(zeroBubbleGreedy(3, 5, INT64_MAX), zeroBubbleGreedy(3, 5, 5));
  WorkerOrders huge =
      zeroBubbleGreedy(4, 8, 8, {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX});
  EXPECT_EQ(verifyStaticOrder(shapeOf(4, 8), huge), "");
  WorkerOrders negative = zeroBubbleGreedy(3, 5, 3, {-1, -5, -2, -9});
  EXPECT_EQ(negative, zeroBubbleGreedy(3, 5, 3, {0, 0, 0, 0}));
  EXPECT_EQ(verifyStaticOrder(shapeOf(3, 5), negative), "");
}
