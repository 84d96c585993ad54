//===- SearchTest.cpp - lower bounds, branch and bound, exact optimum -----===//

#include "pipesched/Scheduling/ExactSchedule.h"
#include "pipesched/Scheduling/ListScheduler.h"
#include "pipesched/Scheduling/Search.h"

#include "ChainProblem.h"

#include <gtest/gtest.h>

#include <random>

using namespace pipesched::scheduling;

using pipesched::scheduling::test::chain;

TEST(SearchBounds, ChainClosedForms) {
  // S = 4, B = 8, W = 4, F = 1, B = 2: a sweep is 12; the work 96 over 4.
  SearchProblem p = chain(4, 8, 4, 1, 2);
  p.memoryLimit = 4;
  ASSERT_EQ(p.check(), "");
  // life(s) = F + 3 (S - 1 - s) + B: 12, 9, 6, 3.
  EXPECT_EQ(activationLifetimes(p), (std::vector<int64_t>{12, 9, 6, 3}));
  LowerBound bound = computeLowerBound(p);
  EXPECT_EQ(bound.criticalPath, 12);
  EXPECT_EQ(bound.work, 24);
  // 8 * 30 over 4 * 4 slots, less the ramps: by tick t a worker has
  // started t + 1 forwards (F = 1), and the last tau ticks free at most
  // ceil(tau / 2) per worker (B = 2): (1 + 2) * 4 * 4 * 3 / 2 = 72 wasted;
  // (240 + 72) / 16 = 19.5.
  EXPECT_EQ(bound.memoryTime, 20);
  EXPECT_EQ(bound.value(), 24);
  EXPECT_STREQ(bound.binding(), "work / W");
  // One activation per worker: the memory-time bound binds, 8 * 30 / 4
  // (no ramp: one activation is held from the first forward).
  p.memoryLimit = 1;
  bound = computeLowerBound(p);
  EXPECT_EQ(bound.memoryTime, 60);
  EXPECT_STREQ(bound.binding(), "memory-time");
}

TEST(SearchBounds, MemoryRampsWasteRoom) {
  // S = 4, B = 4, W = 2, two activations each: 4 * 30 over 4 slots is 30;
  // the first tick holds at most 2 (one forward per worker) and the last
  // two ticks at most 2 (one backward per worker ends in them): 6 wasted.
  SearchProblem p = chain(4, 4, 2, 1, 2);
  p.memoryLimit = 2;
  EXPECT_EQ(computeLowerBound(p).memoryTime, 32); // ceil(126 / 4)
  // Overlapping ramps (the bound below (M - 1)(F + B)) keep the plain one.
  p = chain(1, 1, 1, 1, 2);
  p.memoryLimit = 8;
  EXPECT_EQ(computeLowerBound(p).memoryTime, 1); // ceil(3 / 8)
  // Ramps only count once the step cannot be shorter than they are: one
  // job of each kind, F = 0, B = 1, three activations: the optimum is 1.
  p = chain(1, 1, 1, 0, 1);
  p.memoryLimit = 3;
  EXPECT_EQ(computeLowerBound(p).memoryTime, 1);
  // Forwards of no duration fill at once; the backwards' ramp still wastes
  // 2 * 2 * 1: (4 * (8 + 6 + 4 + 2) + 4) / 4.
  p = chain(4, 4, 2, 0, 2);
  p.memoryLimit = 2;
  EXPECT_EQ(computeLowerBound(p).memoryTime, 21);
}

TEST(SearchBounds, SplitBackwardHoldsUntilTheWeightHalf) {
  SearchProblem p = chain(2, 1, 2, 1, 1, 1);
  p.memoryLimit = 1;
  ASSERT_EQ(p.check(), "");
  // F0 F1 B1 B0 W0 and F1 B1 W1.
  EXPECT_EQ(activationLifetimes(p), (std::vector<int64_t>{5, 3}));
  LowerBound bound = computeLowerBound(p);
  EXPECT_EQ(bound.criticalPath, 5); // F0 F1 B1 B0 W0
  EXPECT_EQ(bound.work, 3);
  EXPECT_EQ(bound.memoryTime, 4); // ceil(8 / 2)
  EXPECT_STREQ(bound.binding(), "critical path");
}

TEST(SearchBounds, StageGraphAndOverlap) {
  // Two legs (0 and 1) feed stage 2.
  SearchProblem p = chain(3, 1, 1, 1, 1);
  p.forward = {1, 4, 1};
  p.backward = {2, 1, 1};
  p.stagePreds = {{}, {}, {0, 1}};
  ASSERT_EQ(p.check(), "");
  // F1 (4) F2 (1) B2 (1) B0 (2) = 8.
  EXPECT_EQ(computeLowerBound(p).criticalPath, 8);
  // life(0): F0, then the longest way to B0: F1 ends at 4 at the earliest,
  // but the path from F0 is F0 F2 B2 B0 = 5.
  EXPECT_EQ(activationLifetimes(p), (std::vector<int64_t>{5, 7, 2}));
  p.overlapRatio = 0.5;
  EXPECT_EQ(computeLowerBound(p).criticalPath, 4);
  EXPECT_EQ(computeLowerBound(p).work, 5); // ceil(10 / 2)
}

TEST(SearchBounds, CheckRefusesBadProblems) {
  SearchProblem p = chain(3, 2, 2, 1, 2);
  p.stagePreds[1] = {2};
  EXPECT_NE(p.check().find("edges go from lower to higher stages"),
            std::string::npos);
  p = chain(3, 2, 2, 1, 2);
  p.backward.pop_back();
  EXPECT_EQ(p.check(), "backward needs one duration per stage");
  p = chain(3, 2, 2, 1, 2);
  p.forward[1] = -1;
  EXPECT_EQ(p.check(), "forward durations must not be negative");
  p = chain(3, 2, 2, 1, 2);
  p.memoryLimit = 0;
  EXPECT_NE(p.check(), "");
}

TEST(SearchBounds, CandidateBoundSeesTheBusiestWorker) {
  // All jobs of stage 0 on worker 0, the rest spread: worker 0 has
  // B * (F + B) = 4 * 3 = 12 of work against the global 6.
  SearchProblem p = chain(2, 4, 2, 1, 2);
  LowerBound global = computeLowerBound(p);
  EXPECT_EQ(global.value(), 12); // work 24 / 2
  std::vector<int32_t> workers(size_t(p.numJobs()));
  for (size_t i = 0; i < workers.size(); ++i)
    workers[i] = int32_t(i / 8); // stage 0 on worker 0, stage 1 on worker 1
  std::vector<int64_t> life = activationLifetimes(p);
  EXPECT_EQ(candidateBound(p, global, life, workers), 12);
  std::fill(workers.begin(), workers.end(), 0);
  EXPECT_EQ(candidateBound(p, global, life, workers), 24);
}

namespace {
/// An evaluator with given latencies (peak 1), counting what it runs.
struct FakeEvaluator {
  std::vector<int64_t> latency;
  std::vector<size_t> seen;
  void operator()(const std::vector<size_t> &batch,
                  std::vector<CandidateResult> &results) {
    for (size_t i : batch) {
      seen.push_back(i);
      results[i].simulated = latency[i] >= 0;
      results[i].latency = latency[i];
      results[i].peak = 1;
    }
  }
};
} // namespace

TEST(SearchBranchAndBound, SkipsWhatCannotRank) {
  SearchProblem p = chain(2, 2, 2, 1, 1);
  //                  0   1   2   3   4   5
  std::vector<int64_t> bounds = {4, 9, 4, 5, 7, 6};
  FakeEvaluator fake{{6, 9, 4, -1, 8, 6}, {}};
  std::vector<uint32_t> family = {0, 1, 2, 3, 4, 5};
  SearchOutcome o = runSearch(
      p, bounds, family, /*top=*/2, /*batch=*/1,
      [&](const std::vector<size_t> &b, std::vector<CandidateResult> &r) {
        fake(b, r);
      });
  // Bound order 0, 2, 3, 5, 4, 1: after 5 the two best are 4 (2) and 6 (0);
  // 4 (bound 7) and 1 (bound 9) cannot beat 6.
  EXPECT_EQ(fake.seen, (std::vector<size_t>{0, 2, 3, 5}));
  EXPECT_EQ(o.ranking, (std::vector<size_t>{2, 0}));
  EXPECT_EQ(o.evaluated, 4);
  EXPECT_EQ(o.pruned, 2);
  EXPECT_EQ(o.failed, 1);
  EXPECT_EQ(verifySearch(p, family, 2, o), "");
  // Any batch size gives the same outcome.
  FakeEvaluator wide{fake.latency, {}};
  SearchOutcome o8 = runSearch(
      p, bounds, family, 2, 8,
      [&](const std::vector<size_t> &b, std::vector<CandidateResult> &r) {
        wide(b, r);
      });
  EXPECT_EQ(o8.ranking, o.ranking);
  EXPECT_EQ(verifySearch(p, family, 2, o8), "");
  // A ranking that skipped a better candidate is caught.
  SearchOutcome bad = o;
  bad.ranking = {0};
  EXPECT_NE(verifySearch(p, family, 2, bad), "");
}

TEST(SearchBranchAndBound, EqualSchedulesOfOneFamilyRankOnce) {
  SearchProblem p = chain(2, 2, 2, 1, 1);
  std::vector<int64_t> bounds = {1, 1, 1};
  std::vector<uint32_t> family = {7, 7, 8};
  FakeEvaluator fake{{5, 5, 5}, {}};
  SearchOutcome o = runSearch(
      p, bounds, family, 3, 1,
      [&](const std::vector<size_t> &b, std::vector<CandidateResult> &r) {
        fake(b, r);
      });
  EXPECT_EQ(o.ranking, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(o.duplicates, 1);
  EXPECT_EQ(verifySearch(p, family, 3, o), "");
}

TEST(SearchBranchAndBound, MemoryLimitExcludes) {
  SearchProblem p = chain(2, 2, 2, 1, 1);
  p.memoryLimit = 2;
  CandidateResult r;
  r.simulated = true;
  r.peak = 3;
  EXPECT_FALSE(r.fits(p));
  r.peak = 2;
  EXPECT_TRUE(r.fits(p));
  p.memoryLimitBytes = 100;
  r.peakBytes = 101;
  EXPECT_FALSE(r.fits(p));
}

TEST(ExactSchedule, HandDerivedOptima) {
  // One worker runs everything: 2 * (1 + 2) * 2 microbatches.
  EXPECT_EQ(solveExactly(chain(2, 2, 1, 1, 2), 0, 100, 1 << 20).makespan, 12);
  // Two workers, one microbatch: the critical path.
  ExactResult r = solveExactly(chain(2, 1, 2, 1, 2), 0, 100, 1 << 20);
  EXPECT_EQ(r.makespan, 6);
  EXPECT_TRUE(r.proven);
  // A transfer of 5 keeps the microbatch on one worker.
  EXPECT_EQ(solveExactly(chain(2, 1, 2, 1, 2), 5, 100, 1 << 20).makespan, 6);
  // Two microbatches, two workers, a transfer of 1: each microbatch on its
  // own worker (DDP), 6.
  EXPECT_EQ(solveExactly(chain(2, 2, 2, 1, 2), 1, 100, 1 << 20).makespan, 6);
  // One activation per worker and one worker: no schedule.
  SearchProblem tight = chain(2, 1, 1, 1, 2);
  tight.memoryLimit = 1;
  r = solveExactly(tight, 0, 100, 1 << 20);
  EXPECT_EQ(r.makespan, 100);
  EXPECT_TRUE(r.proven);
  // With a second worker the two activations fit: 6.
  tight.workers = 2;
  EXPECT_EQ(solveExactly(tight, 0, 100, 1 << 20).makespan, 6);
}

TEST(ExactSchedule, BoundsHoldAndTheNodeLimitIsReported) {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 30; ++trial) {
    int64_t S = 1 + rng() % 3, B = 1 + rng() % 2, W = 1 + rng() % 3;
    SearchProblem p = chain(S, B, W, 1, 1, trial % 2 ? 1 : -1);
    for (int64_t s = 0; s < S; ++s) {
      p.forward[size_t(s)] = 1 + rng() % 3;
      p.backward[size_t(s)] = 1 + rng() % 3;
    }
    p.memoryLimit = trial % 3 ? -1 : int64_t(1 + rng() % 2);
    ASSERT_EQ(p.check(), "");
    ExactResult r = solveExactly(p, 0, 1000, 1 << 22);
    ASSERT_TRUE(r.proven);
    if (r.makespan == 1000)
      continue; // no schedule within the memory limit
    EXPECT_LE(computeLowerBound(p).value(), r.makespan) << "trial " << trial;
  }
  ExactResult cut = solveExactly(chain(4, 4, 2, 1, 2), 0, 1000, 100);
  EXPECT_FALSE(cut.proven);
}

TEST(ExactSchedule, ManyWorkersAreAsFewAsTheJobs) {
  // 2^20 workers for 4 jobs: only 4 can be used; solved at once.
  ExactResult r = solveExactly(chain(1, 2, int64_t(1) << 20, 1, 2), 0, 100,
                               1 << 20);
  EXPECT_TRUE(r.proven);
  EXPECT_EQ(r.makespan, 3);
  EXPECT_LT(r.nodes, 1000);
}

TEST(SearchBounds, LargeStageGraphsTakeTheShortLifetime) {
  SearchProblem p = chain(kMaxExactLifetimeStages + 2, 1, 1, 1, 2);
  p.stagePreds.back() = {0, kMaxExactLifetimeStages}; // not a chain
  ASSERT_EQ(p.check(), "");
  std::vector<int64_t> life = activationLifetimes(p);
  EXPECT_EQ(life.front(), 3); // F + B, not the whole sweep
}
