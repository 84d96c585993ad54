//===- TimelineTest.cpp - accounting and verification of timelines --------===//

#include "pipesched/Scheduling/ListScheduler.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

using namespace pipesched::scheduling;

namespace {
/// Two workers: forwards F0 -> F1 of two microbatches, each forward's
/// activation freed by its backward on the same worker.
JobGraph twoStagePipeline() {
  JobGraph g;
  g.numWorkers = 2;
  for (int b = 0; b < 2; ++b) {
    uint32_t f0 = g.addJob({0, 1, 1, 1, 10, -1}, {});
    uint32_t f1 = g.addJob({1, 1, 1, 1, 10, -1}, {f0});
    uint32_t b1 = g.addJob({1, 2, 0, 0, 0, int64_t(f1)}, {f1});
    g.addJob({0, 2, 0, 0, 0, int64_t(f0)}, {b1});
  }
  return g;
}
} // namespace

TEST(Timeline, SimulatedTimelinesVerify) {
  JobGraph g = twoStagePipeline();
  SimulationResult r = simulate(g);
  ASSERT_TRUE(r.timeline) << r.error;
  EXPECT_EQ(verifyTimeline(g, {}, *r.timeline), "");
  LiveMemory live = accountLiveMemory(g, r.timeline->start, r.timeline->end);
  EXPECT_EQ(live.peak, r.timeline->peakLive);
  EXPECT_EQ(live.peakBytes, r.timeline->peakLiveBytes);
}

TEST(Timeline, VerifyFindsBrokenTimelines) {
  JobGraph g = twoStagePipeline();
  SimulationOptions options;
  Timeline t = *simulate(g, options).timeline;

  Timeline overlap = t; // the second job of worker 0 starts too early
  uint32_t second = overlap.workerOrder[0][1];
  overlap.start[second] -= 1;
  overlap.end[second] -= 1;
  EXPECT_NE(verifyTimeline(g, options, overlap), "");

  Timeline longer = t;
  longer.end[0] += 1;
  EXPECT_NE(verifyTimeline(g, options, longer).find("its duration is 1"),
            std::string::npos);

  Timeline early = t; // F1 of microbatch 0 before its input
  early.start[1] = 0;
  early.end[1] = 1;
  EXPECT_NE(verifyTimeline(g, options, early), "");

  Timeline peak = t;
  peak.peakLive[0] += 1;
  EXPECT_NE(verifyTimeline(g, options, peak).find("peak live memory"),
            std::string::npos);

  // A cap the schedule does not respect.
  SimulationOptions capped;
  capped.memoryCap = {1, -1};
  EXPECT_NE(verifyTimeline(g, capped, t).find("over its cap of 1"),
            std::string::npos);
  // Transfer time the schedule ignored.
  SimulationOptions slow;
  slow.transferTime = 5;
  EXPECT_NE(verifyTimeline(g, slow, t).find("before its input"),
            std::string::npos);
}

TEST(Timeline, LiveMemorySaturates) {
  JobGraph g;
  g.numWorkers = 1;
  int64_t max = std::numeric_limits<int64_t>::max();
  g.addJob({0, 1, 0, 1, max, -1}, {});
  g.addJob({0, 1, 0, 1, max, -1}, {});
  LiveMemory live = accountLiveMemory(g, {0, 1}, {1, 2});
  EXPECT_EQ(live.peak[0], 2);
  EXPECT_EQ(live.peakBytes[0], max);
}

// Random DAGs under random caps and transfer times: whatever the scheduler
// returns verifies.
TEST(Timeline, RandomSchedulesVerify) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    JobGraph g;
    g.numWorkers = 1 + int32_t(rng() % 4);
    int n = 1 + int(rng() % 30);
    std::vector<uint32_t> forwards;
    for (int j = 0; j < n; ++j) {
      std::vector<uint32_t> preds;
      for (int k = 0; k < j; ++k)
        if (rng() % 5 == 0)
          preds.push_back(uint32_t(k));
      Job job{int32_t(rng() % uint32_t(g.numWorkers)), int64_t(rng() % 4),
              int64_t(rng() % 10), 0, 0, -1};
      if (!forwards.empty() && rng() % 3 == 0) {
        job.releases = forwards.back();
        preds.push_back(forwards.back());
        forwards.pop_back();
      } else if (rng() % 2) {
        job.acquire = 1;
        job.acquireBytes = 64;
        forwards.push_back(uint32_t(j));
      }
      g.addJob(job, preds);
    }
    SimulationOptions options;
    options.transferTime = int64_t(rng() % 3);
    if (rng() % 2)
      options.memoryCap.assign(size_t(g.numWorkers), 1 + int64_t(rng() % 3));
    SimulationResult r = simulate(g, options);
    if (!r.timeline)
      continue; // a cap can make a DAG unschedulable: reported, not verified
    ASSERT_EQ(verifyTimeline(g, options, *r.timeline), "") << "trial " << trial;
  }
}
