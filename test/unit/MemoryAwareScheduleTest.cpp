//===- MemoryAwareScheduleTest.cpp - explicit schedules under memory ------===//

#include "pipesched/Scheduling/ExactSchedule.h"
#include "pipesched/Scheduling/MemoryAwareSchedule.h"

#include "ChainProblem.h"

#include <gtest/gtest.h>

#include <random>

using namespace pipesched::scheduling;
using pipesched::scheduling::test::chain;

namespace {
/// S = 2, B = 1, W = 2, F = 1, B = 2, no transfer: F0 F1 on worker 0, then
/// the backwards; the jobs are (s, b, d) by jobCoordIndex: F0 = 0, B0 = 1,
/// F1 = 2, B1 = 3.
ExplicitSchedule sequential() {
  ExplicitSchedule s;
  s.worker = {0, 0, 0, 0};
  s.start = {0, 4, 1, 2};
  s.makespan = 6;
  return s;
}
} // namespace

TEST(ExplicitSchedule, VerifiesEachRule) {
  SearchProblem p = chain(2, 1, 2, 1, 2);
  EXPECT_EQ(verifyExplicitSchedule(p, 0, sequential()), "");
  ExplicitSchedule early = sequential();
  early.start[1] = 3;
  early.makespan = 5;
  EXPECT_EQ(verifyExplicitSchedule(p, 0, early),
            "job 1 starts at 3, before its input from job 3 arrives at 4");
  ExplicitSchedule moved = sequential();
  moved.worker[1] = 1; // B0 on worker 1: its input arrives a transfer later
  EXPECT_EQ(verifyExplicitSchedule(p, 0, moved), "");
  EXPECT_EQ(verifyExplicitSchedule(p, 1, moved),
            "job 1 starts at 4, before its input from job 3 arrives at 5");
  ExplicitSchedule overlap = sequential();
  overlap.start[2] = 0;
  EXPECT_EQ(verifyExplicitSchedule(p, 0, overlap),
            "job 2 starts at 0, before its input from job 0 arrives at 1");
  p.memoryLimit = 1;
  EXPECT_EQ(verifyExplicitSchedule(p, 0, sequential()),
            "worker 0 holds 2 activations, over the limit of 1");
  ExplicitSchedule wrong = sequential();
  wrong.makespan = 7;
  EXPECT_EQ(verifyExplicitSchedule(p, 0, wrong),
            "the makespan is 6, reported 7");
}

TEST(ExplicitSchedule, TwoJobsAtOnceOnAWorker) {
  SearchProblem p = chain(1, 2, 1, 1, 2);
  ExplicitSchedule s; // F(0,0) = 0, B(0,0) = 1, F(0,1) = 2, B(0,1) = 3
  s.worker = {0, 0, 0, 0};
  s.start = {0, 1, 0, 3};
  s.makespan = 5;
  EXPECT_EQ(verifyExplicitSchedule(p, 0, s),
            "worker 0 runs jobs 0 and 2 at once");
}

namespace {
/// The exact solver's proven optimum of a chain under one activation per
/// worker, with its schedule verified.
ExactResult provenOptimum(int64_t S, int64_t B, int64_t W) {
  SearchProblem p = chain(S, B, W, 1, 2);
  p.memoryLimit = 1;
  ExactResult r = solveExactly(p, 0, 100, 1 << 22);
  EXPECT_TRUE(r.proven);
  EXPECT_EQ(r.schedule.makespan, r.makespan);
  EXPECT_EQ(verifyExplicitSchedule(p, 0, r.schedule), "");
  return r;
}
} // namespace

TEST(ExactSchedule, ReturnsTheScheduleOfItsOptimum) {
  // S = B = W = 2: 11 (docs/search.md's table).
  EXPECT_EQ(provenOptimum(2, 2, 2).makespan, 11);
  // Nothing below the upper bound: no schedule.
  SearchProblem p = chain(2, 2, 2, 1, 2);
  p.memoryLimit = 1;
  EXPECT_TRUE(solveExactly(p, 0, 11, 1 << 20).schedule.empty());
}

TEST(ExactSchedule, AlikeMicrobatchesAndMemoryTimePrune) {
  // S = 2, B = 4, W = 2: 108,153 nodes without the microbatch order and
  // the activation-time bound, 1,847 with them.
  ExactResult r = provenOptimum(2, 4, 2);
  EXPECT_EQ(r.makespan, 21);
  EXPECT_LT(r.nodes, 4000);
}

TEST(MemoryAwareSchedule, NoScheduleWhenAMicrobatchCannotFit) {
  // A microbatch holds S = 3 activations at its last forward; 2 workers of
  // one each hold 2.
  SearchProblem p = chain(3, 2, 2, 1, 2);
  p.memoryLimit = 1;
  EXPECT_TRUE(searchUnderMemory(p, 0, {}).empty());
  p.workers = 3;
  ExplicitSchedule s = searchUnderMemory(p, 0, {});
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(verifyExplicitSchedule(p, 0, s), "");
}

TEST(MemoryAwareSchedule, RandomStepsVerifyAndNeverDeadlock) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t S = 1 + rng() % 5, B = 1 + rng() % 6, W = 1 + rng() % 4;
    SearchProblem p = chain(S, B, W, 1, 1, trial % 2 ? int64_t(rng() % 3) : -1);
    for (int64_t s = 0; s < S; ++s) {
      p.forward[size_t(s)] = rng() % 4;
      p.backward[size_t(s)] = 1 + rng() % 4;
    }
    // From the least that holds a microbatch (S over the workers) up.
    p.memoryLimit = (S + W - 1) / W + int64_t(rng() % 3);
    int64_t transfer = rng() % 3;
    ASSERT_EQ(p.check(), "");
    ExplicitSchedule s = searchUnderMemory(p, transfer, {40, uint64_t(trial)});
    ASSERT_FALSE(s.empty()) << "trial " << trial;
    EXPECT_EQ(verifyExplicitSchedule(p, transfer, s), "") << "trial " << trial;
    EXPECT_LE(computeLowerBound(p).value(), s.makespan) << "trial " << trial;
  }
}

TEST(MemoryAwareSchedule, MatchesTheExactOptimumOfTinySteps) {
  // docs/search.md: S = 2, B = 4, W = 2, F = 1, B = 2, one activation per
  // worker; the placement maps give 24, the optimum is 21.
  SearchProblem p = chain(2, 4, 2, 1, 2);
  p.memoryLimit = 1;
  ExplicitSchedule s = searchUnderMemory(p, 0, {});
  EXPECT_EQ(s.makespan, 21);
  EXPECT_EQ(verifyExplicitSchedule(p, 0, s), "");
}

TEST(MemoryAwareSchedule, IsDeterministic) {
  SearchProblem p = chain(4, 8, 2, 1, 2);
  p.memoryLimit = 3;
  ExplicitSchedule a = searchUnderMemory(p, 1, {100, 3});
  ExplicitSchedule b = searchUnderMemory(p, 1, {100, 3});
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.start, b.start);
}

TEST(ExactSchedule, JobsOfNoDurationReadyWorkAtOnce) {
  // Split chain S = 2, B = 1, W = 2, one activation each: F0 = 1, F1 = 0,
  // B0 = 1, B1 = 0, W0 = 0, W1 = 1. Worker 1 may pass at 1, before F1 (no
  // duration, on worker 0) readies B1 and W1 for it: the optimum is 2.
  SearchProblem p = chain(2, 1, 2, 1, 1, 0);
  p.forward = {1, 0};
  p.backward = {1, 0};
  p.weight = {0, 1};
  p.memoryLimit = 1;
  ExactResult r = solveExactly(p, 0, 100, 1 << 20);
  ASSERT_TRUE(r.proven);
  EXPECT_EQ(r.makespan, 2);
  EXPECT_EQ(verifyExplicitSchedule(p, 0, r.schedule), "");
}

TEST(ExplicitSchedule, OrdersTiesAsTheJobsStarted) {
  // S = 2, B = 1 on one worker, backwards of no duration: B1 (job 3) and B0
  // (job 1) start and end at 3; B0 reads B1's gradient, so B1 comes first.
  SearchProblem p = chain(2, 1, 1, 1, 0);
  p.memoryLimit = 2;
  ExplicitSchedule s = searchUnderMemory(p, 0, {});
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.start[1], s.start[3]);
  std::vector<std::vector<uint32_t>> orders =
      workerOrders(s, buildProblemJobs(p), 1);
  EXPECT_EQ(orders[0], (std::vector<uint32_t>{0, 2, 3, 1}));
}

TEST(MemoryAwareSchedule, RefusesTimesPast64Bits) {
  SearchProblem p = chain(3, 2, 2, int64_t(1) << 62, int64_t(1) << 62);
  p.memoryLimit = 2;
  EXPECT_FALSE(fitsInTime(p, 0));
  EXPECT_TRUE(searchUnderMemory(p, 0, {}).empty());
  ExactResult r = solveExactly(p, 0, 100, 1 << 20);
  EXPECT_FALSE(r.proven);
  EXPECT_TRUE(r.schedule.empty());
  // A ranking of the wrong length is refused, not read past its end.
  EXPECT_TRUE(listScheduleUnderMemory(chain(2, 2, 2, 1, 2), 0, {}).empty());
}
