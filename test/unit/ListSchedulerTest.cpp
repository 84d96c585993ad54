//===- ListSchedulerTest.cpp - unit tests of the list scheduler -----------===//
//
// Hand-checked cases, pipeline schedules with known closed forms (GPipe,
// 1F1B), error reporting, a randomized comparison against a naive reference
// simulation written here from the header's semantics, and a scale run.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/ListScheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

using namespace pipesched::scheduling;

namespace {

Job makeJob(int32_t worker, int64_t duration, int64_t priority = 0,
            int64_t acquire = 0, int64_t releases = -1) {
  Job job;
  job.worker = worker;
  job.duration = duration;
  job.priority = priority;
  job.acquire = acquire;
  job.releases = releases;
  return job;
}

JobGraph makeGraph(int32_t numWorkers) {
  JobGraph graph;
  graph.numWorkers = numWorkers;
  return graph;
}

/// Expects a failed simulation whose error mentions every one of `parts`.
void expectError(const SimulationResult &result,
                 const std::vector<std::string> &parts) {
  EXPECT_FALSE(result.timeline.has_value());
  EXPECT_FALSE(result.error.empty());
  for (const std::string &part : parts)
    EXPECT_NE(result.error.find(part), std::string::npos)
        << "error \"" << result.error << "\" lacks \"" << part << "\"";
}

#define ASSERT_SCHEDULED(result)                                               \
  ASSERT_TRUE((result).timeline.has_value()) << (result).error

//===----------------------------------------------------------------------===//
// Hand-checked small cases
//===----------------------------------------------------------------------===//

TEST(ListScheduler, AddJobMaintainsPredBegin) {
  JobGraph graph;
  EXPECT_EQ(graph.addJob(makeJob(0, 1), {}), 0u);
  EXPECT_EQ(graph.predBegin, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(graph.addJob(makeJob(0, 1), {0}), 1u);
  EXPECT_EQ(graph.addJob(makeJob(0, 1), {1, 0}), 2u);
  EXPECT_EQ(graph.predBegin, (std::vector<uint32_t>{0, 0, 1, 3}));
  EXPECT_EQ(graph.preds, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(graph.jobs.size(), 3u);
}

TEST(ListScheduler, EmptyGraph) {
  for (JobGraph graph : {makeGraph(2), JobGraph{2, {}, {0}, {}, {}}}) {
    SimulationResult result = simulate(graph);
    ASSERT_SCHEDULED(result);
    EXPECT_EQ(result.timeline->makespan, 0);
    EXPECT_EQ(result.timeline->busy, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(result.timeline->workerOrder.size(), 2u);
  }
}

TEST(ListScheduler, ChainOnOneWorker) {
  JobGraph graph = makeGraph(1);
  // Priorities favour the later jobs: dependencies still decide the order.
  graph.addJob(makeJob(0, 2, /*priority=*/9), {});
  graph.addJob(makeJob(0, 3, 5), {0});
  graph.addJob(makeJob(0, 1, 0), {1});
  SimulationResult result = simulate(graph);
  ASSERT_SCHEDULED(result);
  const Timeline &t = *result.timeline;
  EXPECT_EQ(t.start, (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(t.end, (std::vector<int64_t>{2, 5, 6}));
  EXPECT_EQ(t.position, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(t.workerOrder, (std::vector<std::vector<uint32_t>>{{0, 1, 2}}));
  EXPECT_EQ(t.makespan, 6);
  EXPECT_EQ(t.busy, (std::vector<int64_t>{6}));
}

TEST(ListScheduler, IndependentJobsOnTwoWorkers) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 3), {});
  graph.addJob(makeJob(1, 4), {});
  SimulationResult result = simulate(graph, {/*transferTime=*/7, {}});
  ASSERT_SCHEDULED(result);
  const Timeline &t = *result.timeline;
  EXPECT_EQ(t.start, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t.end, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(t.position, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t.makespan, 4);
  EXPECT_EQ(t.busy, (std::vector<int64_t>{3, 4}));
}

TEST(ListScheduler, TransferTimeOnlyAcrossWorkers) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 2), {});     // a: [0, 2)
  graph.addJob(makeJob(0, 1), {0});    // b: local, [2, 3)
  graph.addJob(makeJob(1, 1), {0});    // c: remote, arrives at 2 + 5
  graph.addJob(makeJob(1, 1), {1, 2}); // d: max(3 + 5, 8 + 0) = 8
  SimulationResult result = simulate(graph, {/*transferTime=*/5, {}});
  ASSERT_SCHEDULED(result);
  const Timeline &t = *result.timeline;
  EXPECT_EQ(t.start, (std::vector<int64_t>{0, 2, 7, 8}));
  EXPECT_EQ(t.end, (std::vector<int64_t>{2, 3, 8, 9}));
  EXPECT_EQ(t.makespan, 9);
}

TEST(ListScheduler, FutureArrivalDoesNotBlockOtherReadyJobs) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 1), {});                  // 0: [0, 1)
  graph.addJob(makeJob(1, 1, /*priority=*/0), {0}); // 1: arrives at 4
  graph.addJob(makeJob(1, 4, /*priority=*/5), {});  // 2: runs meanwhile
  graph.addJob(makeJob(1, 1, /*priority=*/6), {});  // 3: loses to 1 at 4
  SimulationResult result = simulate(graph, {/*transferTime=*/3, {}});
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{0, 4, 0, 5}));
  EXPECT_EQ(result.timeline->workerOrder[1], (std::vector<uint32_t>{2, 1, 3}));
}

TEST(ListScheduler, PriorityThenIndexBreaksTies) {
  JobGraph graph = makeGraph(1);
  for (int64_t priority : {2, 1, 1, 0, 1})
    graph.addJob(makeJob(0, 1, priority), {});
  SimulationResult result = simulate(graph);
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->workerOrder[0],
            (std::vector<uint32_t>{3, 1, 2, 4, 0}));
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{4, 1, 2, 0, 3}));
  EXPECT_EQ(result.timeline->position, (std::vector<int64_t>{4, 1, 2, 0, 3}));
}

TEST(ListScheduler, CompletionBeforeDispatchAtEqualTime) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 2, /*priority=*/0), {});  // 0: [0, 2)
  graph.addJob(makeJob(0, 1, /*priority=*/0), {0}); // 1: successor, at 2
  graph.addJob(makeJob(0, 1, /*priority=*/1), {});  // 2: waiting since 0
  graph.addJob(makeJob(1, 1), {0});                 // 3: other worker, at 2
  SimulationResult result = simulate(graph);
  ASSERT_SCHEDULED(result);
  // At t = 2 job 0's completion makes job 1 ready before worker 0 picks, so
  // job 1 (priority 0) beats job 2 (priority 1), which waited since t = 0.
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{0, 2, 3, 2}));
  EXPECT_EQ(result.timeline->makespan, 4);
}

TEST(ListScheduler, AllCompletionsAtEqualTimeBeforeDispatch) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 2), {});                  // 0: [0, 2)
  graph.addJob(makeJob(1, 2), {});                  // 1: [0, 2)
  graph.addJob(makeJob(0, 1, /*priority=*/1), {0}); // 2: ready at 2
  graph.addJob(makeJob(0, 1, /*priority=*/0), {1}); // 3: ready at 2 too
  SimulationResult result = simulate(graph);
  ASSERT_SCHEDULED(result);
  // Worker 0 picks only after both completions at t = 2: job 3 wins.
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{0, 0, 3, 2}));
}

TEST(ListScheduler, ZeroDurationJobsChainAtOneTime) {
  JobGraph graph = makeGraph(1);
  graph.addJob(makeJob(0, 0, /*priority=*/0), {});
  graph.addJob(makeJob(0, 0, /*priority=*/0), {0});
  graph.addJob(makeJob(0, 1, /*priority=*/0), {1});
  graph.addJob(makeJob(0, 1, /*priority=*/9), {}); // must not jump the chain
  SimulationResult result = simulate(graph);
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(result.timeline->workerOrder[0],
            (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(result.timeline->makespan, 2);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TEST(ListSchedulerMemory, CapSkipsToBestJobThatFits) {
  JobGraph graph = makeGraph(1);
  graph.addJob(makeJob(0, 1, 0, /*acquire=*/2), {});      // 0: live 2
  graph.addJob(makeJob(0, 1, 1, /*acquire=*/1), {});      // 1: blocked
  graph.addJob(makeJob(0, 1, 2, /*acquire=*/0), {});      // 2: fits
  graph.addJob(makeJob(0, 1, 3, 0, /*releases=*/0), {0}); // 3: frees 2
  SimulationResult result = simulate(graph, {0, {/*cap=*/2}});
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->workerOrder[0],
            (std::vector<uint32_t>{0, 2, 3, 1}));
  EXPECT_EQ(result.timeline->peakLive, (std::vector<int64_t>{2}));
}

TEST(ListSchedulerMemory, SmallerAcquireOvertakesBlockedLargerOne) {
  // The header's rule: the worker picks the best ready job that fits, even
  // if it acquires; a blocked job only blocks jobs that do not fit either.
  JobGraph graph = makeGraph(1);
  graph.addJob(makeJob(0, 1, 0, /*acquire=*/2), {});      // 0: live 2
  graph.addJob(makeJob(0, 1, 1, /*acquire=*/2), {});      // 1: 4 > 3
  graph.addJob(makeJob(0, 1, 2, /*acquire=*/1), {});      // 2: 3 <= 3
  graph.addJob(makeJob(0, 1, 3, /*acquire=*/0), {});      // 3: fits
  graph.addJob(makeJob(0, 1, 4, 0, /*releases=*/0), {0}); // 4: frees 2
  graph.addJob(makeJob(0, 1, 5, 0, /*releases=*/2), {2}); // 5: frees 1
  SimulationResult result = simulate(graph, {0, {/*cap=*/3}});
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->workerOrder[0],
            (std::vector<uint32_t>{0, 2, 3, 4, 1, 5}));
  EXPECT_EQ(result.timeline->peakLive, (std::vector<int64_t>{3}));
}

TEST(ListSchedulerMemory, ReleaseOnAnotherWorkerUnblocks) {
  JobGraph graph = makeGraph(2);
  Job forward = makeJob(0, 1, 0, /*acquire=*/1);
  forward.acquireBytes = 100;
  graph.addJob(forward, {}); // 0: [0, 1)
  forward.priority = 1;
  graph.addJob(forward, {});                              // 1: waits for 2
  graph.addJob(makeJob(1, 2, 0, 0, /*releases=*/0), {0}); // 2: [1, 3)
  SimulationResult result = simulate(graph, {0, {/*caps=*/1, -1}});
  ASSERT_SCHEDULED(result);
  const Timeline &t = *result.timeline;
  EXPECT_EQ(t.start, (std::vector<int64_t>{0, 3, 1}));
  EXPECT_EQ(t.peakLive, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(t.peakLiveBytes, (std::vector<int64_t>{100, 0}));
  // Without a cap both forwards are live at once.
  SimulationResult uncapped = simulate(graph);
  ASSERT_SCHEDULED(uncapped);
  EXPECT_EQ(uncapped.timeline->peakLive, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(uncapped.timeline->peakLiveBytes, (std::vector<int64_t>{200, 0}));
}

TEST(ListSchedulerMemory, PartsReleasedByTwoJobs) {
  // A split backward: the forward keeps 10 bytes (2 units), B frees the 6
  // bytes W does not need (1 unit), W the 4 it re-read (1 unit). With a cap
  // of 3 units the second forward starts once B has freed its part, not
  // after W.
  JobGraph graph = makeGraph(1);
  Job forward = makeJob(0, 1, 0, /*acquire=*/2);
  forward.acquireBytes = 10;
  graph.addJob(forward, {}); // 0: F0 [0, 1)
  Job b = makeJob(0, 1, 1, 0, /*releases=*/0);
  b.releaseUnits = 1;
  b.releaseBytes = 6;
  graph.addJob(b, {0}); // 1: B0 [1, 2)
  Job w = makeJob(0, 1, 3, 0, /*releases=*/0);
  w.releaseUnits = 1;
  w.releaseBytes = 4;
  graph.addJob(w, {1}); // 2: W0, last by priority
  forward.priority = 2;
  graph.addJob(forward, {}); // 3: F1, fits once B0 freed its part
  SimulationResult result = simulate(graph, {0, {/*cap=*/3}});
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->workerOrder[0],
            (std::vector<uint32_t>{0, 1, 3, 2}));
  EXPECT_EQ(result.timeline->peakLive, (std::vector<int64_t>{3}));
  EXPECT_EQ(result.timeline->peakLiveBytes, (std::vector<int64_t>{14}));
  // Freed wholly by W instead, F1 waits for it: 4 units would exceed 3.
  graph.jobs[1].releases = -1;
  graph.jobs[2].releaseUnits = graph.jobs[2].releaseBytes = -1;
  SimulationResult whole = simulate(graph, {0, {/*cap=*/3}});
  ASSERT_SCHEDULED(whole);
  EXPECT_EQ(whole.timeline->workerOrder[0],
            (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(whole.timeline->peakLive, (std::vector<int64_t>{2}));
}

//===----------------------------------------------------------------------===//
// Pipelines: GPipe and 1F1B
//===----------------------------------------------------------------------===//

enum class PipelinePriority { FillDrain, BackwardFirst };

/// S stages on S workers, B microbatches; forwards acquire one unit that
/// their backward releases. Indices: F(s,b) = b*S + s, B(s,b) = S*B + b*S +
/// (S-1-s), so every job comes after its predecessors.
struct Pipeline {
  int S, B;
  JobGraph graph;

  uint32_t fwd(int s, int b) const { return b * S + s; }
  uint32_t bwd(int s, int b) const { return S * B + b * S + (S - 1 - s); }
};

Pipeline buildPipeline(int S, int B, int64_t f, int64_t bwd,
                       PipelinePriority priority) {
  Pipeline p{S, B, makeGraph(S)};
  p.graph.jobs.reserve(2 * size_t(S) * B);
  bool fillDrain = priority == PipelinePriority::FillDrain;
  for (int b = 0; b < B; ++b) {
    for (int s = 0; s < S; ++s) {
      Job job = makeJob(s, f, fillDrain ? b : B + b, /*acquire=*/1);
      job.acquireBytes = 1000;
      std::vector<uint32_t> preds;
      if (s > 0)
        preds.push_back(p.fwd(s - 1, b));
      p.graph.addJob(job, preds);
    }
  }
  for (int b = 0; b < B; ++b) {
    for (int s = S - 1; s >= 0; --s) {
      Job job = makeJob(s, bwd, fillDrain ? B + b : b, 0, p.fwd(s, b));
      uint32_t pred = s == S - 1 ? p.fwd(s, b) : p.bwd(s + 1, b);
      p.graph.addJob(job, {pred});
    }
  }
  return p;
}

/// The 1F1B order of stage s: S-1-s warm-up forwards, then alternating
/// F, B, then the cool-down backwards.
std::vector<uint32_t> expected1F1BOrder(const Pipeline &p, int s) {
  int warmup = std::min(p.S - 1 - s, p.B);
  std::vector<uint32_t> order;
  int nextF = 0, nextB = 0;
  while (nextF < warmup)
    order.push_back(p.fwd(s, nextF++));
  while (nextF < p.B) {
    order.push_back(p.fwd(s, nextF++));
    order.push_back(p.bwd(s, nextB++));
  }
  while (nextB < p.B)
    order.push_back(p.bwd(s, nextB++));
  return order;
}

SimulationOptions oneFOneBCaps(int S) {
  SimulationOptions options;
  for (int s = 0; s < S; ++s)
    options.memoryCap.push_back(S - s);
  return options;
}

const std::vector<std::pair<int, int>> kPipelineShapes = {
    {1, 1}, {1, 4}, {2, 1}, {2, 5},  {3, 1}, {4, 2},
    {4, 4}, {4, 9}, {8, 3}, {8, 16}, {5, 12}};

TEST(ListSchedulerPipeline, GPipeMakespan) {
  for (auto [S, B] : kPipelineShapes) {
    SCOPED_TRACE("S=" + std::to_string(S) + " B=" + std::to_string(B));
    Pipeline p = buildPipeline(S, B, 1, 2, PipelinePriority::FillDrain);
    SimulationResult result = simulate(p.graph);
    ASSERT_SCHEDULED(result);
    EXPECT_EQ(result.timeline->makespan, (B + S - 1) * 3);
    for (int s = 0; s < S; ++s) {
      EXPECT_EQ(result.timeline->peakLive[s], B); // all forwards first
      EXPECT_EQ(result.timeline->peakLiveBytes[s], 1000 * B);
      EXPECT_EQ(result.timeline->busy[s], 3 * B);
    }
  }
}

TEST(ListSchedulerPipeline, OneFOneBOrderPeakAndMakespan) {
  for (auto [S, B] : kPipelineShapes) {
    SCOPED_TRACE("S=" + std::to_string(S) + " B=" + std::to_string(B));
    Pipeline p = buildPipeline(S, B, 1, 2, PipelinePriority::BackwardFirst);
    SimulationResult result = simulate(p.graph, oneFOneBCaps(S));
    ASSERT_SCHEDULED(result);
    for (int s = 0; s < S; ++s) {
      EXPECT_EQ(result.timeline->workerOrder[s], expected1F1BOrder(p, s))
          << "stage " << s;
      EXPECT_EQ(result.timeline->peakLive[s], std::min(S - s, B));
    }
    EXPECT_EQ(result.timeline->makespan, (B + S - 1) * 3);
  }
}

TEST(ListSchedulerPipeline, OneFOneBReplaysAsExplicitOrder) {
  // Feeding the 1F1B order back as an explicit order reproduces it.
  Pipeline p = buildPipeline(4, 6, 1, 2, PipelinePriority::FillDrain);
  for (int s = 0; s < 4; ++s)
    p.graph.order.push_back(expected1F1BOrder(p, s));
  SimulationResult result = simulate(p.graph);
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->makespan, (6 + 4 - 1) * 3);
  for (int s = 0; s < 4; ++s)
    EXPECT_EQ(result.timeline->peakLive[s], 4 - s);
}

//===----------------------------------------------------------------------===//
// Explicit order
//===----------------------------------------------------------------------===//

TEST(ListSchedulerOrder, RunsListsInOrderIgnoringPriority) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(1, 3), {});                        // 0: [0, 3)
  graph.addJob(makeJob(0, 1, /*priority=*/9, 1), {0});    // 1: waits for 0
  graph.addJob(makeJob(0, 2, /*priority=*/0, 1), {});     // 2: after 1
  graph.addJob(makeJob(0, 1, 0, 0, /*releases=*/1), {1}); // 3
  graph.order = {{1, 2, 3}, {0}};
  SimulationResult result = simulate(graph, {0, {2, 2}});
  ASSERT_SCHEDULED(result);
  const Timeline &t = *result.timeline;
  EXPECT_EQ(t.start, (std::vector<int64_t>{0, 3, 4, 6}));
  EXPECT_EQ(t.workerOrder, graph.order);
  EXPECT_EQ(t.peakLive, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(t.makespan, 7);
  // Under a cap of 1, job 2 would wait for job 3, which follows it.
  result = simulate(graph, {0, {1, 1}});
  expectError(result, {"worker 0 waits for job 2, blocked by its memory cap "
                       "(live 1 + 1 > cap 1)"});
}

TEST(ListSchedulerOrder, ListedJobsWaitForRoomUnderTheCap) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 1, 0, 1), {});                  // 0: Fa
  graph.addJob(makeJob(0, 1, 0, 1), {});                  // 1: Fb
  graph.addJob(makeJob(1, 2, 0, 0, /*releases=*/0), {0}); // 2: Ba, elsewhere
  graph.order = {{0, 1}, {2}};
  SimulationResult free = simulate(graph, {0, {}});
  ASSERT_SCHEDULED(free);
  EXPECT_EQ(free.timeline->start, (std::vector<int64_t>{0, 1, 1}));
  // One activation on worker 0: Fb waits until Ba frees Fa's at 3.
  SimulationResult capped = simulate(graph, {0, {1, -1}});
  ASSERT_SCHEDULED(capped);
  EXPECT_EQ(capped.timeline->start, (std::vector<int64_t>{0, 3, 1}));
  EXPECT_EQ(capped.timeline->peakLive, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(verifyTimeline(graph, {0, {1, -1}}, *capped.timeline), "");
}

TEST(ListSchedulerNodes, TransfersBetweenNodesTakeTheirTime) {
  // Three workers, 0 and 1 on node 0, 2 on node 1: a job on each, each
  // reading the one before.
  JobGraph graph = makeGraph(3);
  graph.addJob(makeJob(0, 1), {});
  graph.addJob(makeJob(1, 1), {0});
  graph.addJob(makeJob(2, 1), {1});
  SimulationOptions options{1, {}};
  options.nodeOf = {0, 0, 1};
  options.interNodeTransferTime = 5;
  EXPECT_EQ(options.transferBetween(0, 0), 0);
  EXPECT_EQ(options.transferBetween(0, 1), 1);
  EXPECT_EQ(options.transferBetween(1, 2), 5);
  SimulationResult result = simulate(graph, options);
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->start, (std::vector<int64_t>{0, 2, 8}));
  EXPECT_EQ(verifyTimeline(graph, options, *result.timeline), "");
  // The same timeline is too early when the link between nodes is slower.
  options.interNodeTransferTime = 6;
  EXPECT_NE(verifyTimeline(graph, options, *result.timeline), "");
  options.nodeOf = {0, 1};
  expectError(simulate(graph, options),
              {"invalid options: nodeOf has 2 entries, expected 0 or "
               "numWorkers = 3"});
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(ListSchedulerErrors, CapBelowAcquire) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 1), {});
  graph.addJob(makeJob(1, 1, 0, /*acquire=*/1), {});
  SimulationResult result = simulate(graph, {0, {-1, 0}});
  expectError(result, {"memory cap", "worker 1", "job 1"});
  EXPECT_EQ(result.blockedJobs, (std::vector<uint32_t>{1}));
}

TEST(ListSchedulerErrors, CapDeadlock) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 1, 0, /*acquire=*/1), {});         // 0: F0
  graph.addJob(makeJob(0, 1, 1, /*acquire=*/1), {});         // 1: F1, blocked
  graph.addJob(makeJob(0, 1, 2, 0, /*releases=*/1), {1});    // 2: B1
  graph.addJob(makeJob(0, 1, 3, 0, /*releases=*/0), {0, 2}); // 3: B0
  graph.addJob(makeJob(1, 1), {3});                          // 4
  SimulationResult result = simulate(graph, {0, {1, -1}});
  expectError(result,
              {"worker 0 waits for job 1, blocked by its memory cap (live 1 + "
               "1 > cap 1)",
               "worker 1 waits for job 4, which needs job 3"});
  EXPECT_EQ(result.blockedJobs, (std::vector<uint32_t>{1, 4}));
}

TEST(ListSchedulerErrors, ExplicitOrderBackwardBeforeForward) {
  JobGraph graph = makeGraph(1);
  graph.addJob(makeJob(0, 1, 0, /*acquire=*/1), {});
  graph.addJob(makeJob(0, 2, 0, 0, /*releases=*/0), {0});
  graph.order = {{1, 0}};
  SimulationResult result = simulate(graph);
  expectError(result,
              {"deadlock", "worker 0 waits for job 1, which needs job 0"});
  EXPECT_EQ(result.blockedJobs, (std::vector<uint32_t>{1}));
}

TEST(ListSchedulerErrors, ExplicitOrderCrossWorkerCycle) {
  JobGraph graph = makeGraph(3);
  graph.addJob(makeJob(0, 1), {3}); // 0: worker 0 first, needs 3
  graph.addJob(makeJob(0, 1), {});  // 1
  graph.addJob(makeJob(1, 1), {1}); // 2: worker 1 first, needs 1
  graph.addJob(makeJob(1, 1), {});  // 3
  graph.addJob(makeJob(2, 1), {});  // 4: worker 2 finishes
  graph.order = {{0, 1}, {2, 3}, {4}};
  SimulationResult result = simulate(graph);
  expectError(result, {"worker 0 waits for job 0, which needs job 3 (not run, "
                       "on worker 1)",
                       "worker 1 waits for job 2, which needs job 1 (not run, "
                       "on worker 0)"});
  EXPECT_EQ(result.error.find("worker 2"), std::string::npos);
  EXPECT_EQ(result.blockedJobs, (std::vector<uint32_t>{0, 2}));
}

TEST(ListSchedulerErrors, CycleInGraph) {
  JobGraph graph = makeGraph(2);
  graph.addJob(makeJob(0, 1), {});
  graph.addJob(makeJob(0, 1), {0, 3}); // 1 needs 3
  graph.addJob(makeJob(1, 1), {1});    // 2 needs 1
  graph.addJob(makeJob(1, 1), {2});    // 3 needs 2
  SimulationResult result = simulate(graph);
  expectError(result, {"cycle"});
  std::vector<uint32_t> cycle = result.blockedJobs;
  std::sort(cycle.begin(), cycle.end());
  EXPECT_EQ(cycle, (std::vector<uint32_t>{1, 2, 3}));

  JobGraph self = makeGraph(1);
  self.addJob(makeJob(0, 1), {0});
  expectError(simulate(self), {"cycle", "job 0 -> job 0"});
}

TEST(ListSchedulerErrors, ReleaseOfJobNotStarted) {
  JobGraph graph = makeGraph(1);
  graph.addJob(makeJob(0, 1, 0, 0, /*releases=*/1), {});
  graph.addJob(makeJob(0, 1, 1, /*acquire=*/1), {});
  expectError(simulate(graph), {"job 0 releases", "job 1", "not started"});
}

TEST(ListSchedulerErrors, InvalidInputs) {
  auto base = [] {
    JobGraph graph = makeGraph(2);
    graph.addJob(makeJob(0, 1, 0, /*acquire=*/1), {});
    graph.addJob(makeJob(1, 1, 0, 0, /*releases=*/0), {0});
    return graph;
  };
  struct Case {
    const char *name;
    std::function<void(JobGraph &, SimulationOptions &)> mutate;
    const char *expected;
  };
  std::vector<Case> cases = {
      {"no workers", [](JobGraph &g, auto &) { g.numWorkers = 0; },
       "numWorkers"},
      {"short predBegin", [](JobGraph &g, auto &) { g.predBegin.pop_back(); },
       "predBegin"},
      {"predBegin not at 0", [](JobGraph &g, auto &) { g.predBegin[0] = 1; },
       "predBegin"},
      {"predBegin decreasing",
       [](JobGraph &g, auto &) {
         g.predBegin = {0, 1, 0};
         g.preds = {};
       },
       "predBegin"},
      {"pred out of range", [](JobGraph &g, auto &) { g.preds[0] = 2; },
       "predecessor 2"},
      {"negative worker", [](JobGraph &g, auto &) { g.jobs[1].worker = -1; },
       "worker -1"},
      {"worker too large", [](JobGraph &g, auto &) { g.jobs[1].worker = 2; },
       "worker 2"},
      {"negative duration",
       [](JobGraph &g, auto &) { g.jobs[0].duration = -1; }, "duration"},
      {"negative acquire", [](JobGraph &g, auto &) { g.jobs[0].acquire = -1; },
       "negative amount"},
      {"release out of range",
       [](JobGraph &g, auto &) { g.jobs[1].releases = 5; }, "releases 5"},
      {"double release", [](JobGraph &g, auto &) { g.jobs[0].releases = 0; },
       "both release"},
      {"parts beyond the acquire",
       [](JobGraph &g, auto &) {
         g.jobs[1].releaseUnits = 2; // job 0 acquired 1
       },
       "releases more of job 0's memory than it acquired"},
      {"negative part",
       [](JobGraph &g, auto &) { g.jobs[1].releaseBytes = -2; },
       "negative part"},
      {"negative transfer",
       [](JobGraph &, SimulationOptions &o) { o.transferTime = -1; },
       "transferTime"},
      {"cap size", [](JobGraph &, SimulationOptions &o) { o.memoryCap = {1}; },
       "memoryCap"},
      {"duration overflow",
       [](JobGraph &g, auto &) {
         g.jobs[0].duration = std::numeric_limits<int64_t>::max();
       },
       "overflow"},
      {"order list count",
       [](JobGraph &g, auto &) {
         g.order = {{0, 1}};
       },
       "lists"},
      {"order wrong worker",
       [](JobGraph &g, auto &) {
         g.order = {{0, 1}, {}};
       },
       "runs on worker 1"},
      {"order duplicate",
       [](JobGraph &g, auto &) {
         g.order = {{0, 0}, {1}};
       },
       "already listed"},
      {"order missing job",
       [](JobGraph &g, auto &) {
         g.order = {{0}, {}};
       },
       "job 1 is on no worker's list"},
      {"order index out of range",
       [](JobGraph &g, auto &) {
         g.order = {{0}, {7}};
       },
       "out of range"},
  };
  {
    JobGraph graph = base();
    ASSERT_SCHEDULED(simulate(graph));
  }
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    JobGraph graph = base();
    SimulationOptions options;
    c.mutate(graph, options);
    expectError(simulate(graph, options), {c.expected});
  }
}

//===----------------------------------------------------------------------===//
// Randomized comparison against a naive reference
//===----------------------------------------------------------------------===//

struct Reference {
  bool ok = false;
  std::vector<int64_t> start, end, peakLive, peakLiveBytes;
  std::vector<std::vector<uint32_t>> workerOrder;
  int64_t makespan = 0;
};

/// The header's semantics, simulated naively: time advances to the next
/// completion or arrival; at each time, rounds of "complete every job that
/// ends by now, then let every idle worker pick" repeat until nothing
/// starts (a job of duration 0 completes in the next round). Readiness is
/// recomputed from scratch every time: O(J^2) per step.
Reference referenceSimulate(const JobGraph &graph,
                            const SimulationOptions &options) {
  size_t numJobs = graph.jobs.size();
  size_t numWorkers = graph.numWorkers;
  bool orderMode = !graph.order.empty();
  Reference ref;
  ref.start.assign(numJobs, -1);
  ref.end.assign(numJobs, -1);
  ref.peakLive.assign(numWorkers, 0);
  ref.peakLiveBytes.assign(numWorkers, 0);
  ref.workerOrder.resize(numWorkers);
  enum State { Waiting, Running, Done };
  std::vector<State> state(numJobs, Waiting);
  std::vector<int64_t> live(numWorkers, 0), liveBytes(numWorkers, 0);

  // Whether all preds are done; `at` = when the last input arrives.
  auto inputs = [&](uint32_t j, int64_t &at) {
    at = 0;
    for (uint32_t e = graph.predBegin[j]; e < graph.predBegin[j + 1]; ++e) {
      uint32_t p = graph.preds[e];
      if (state[p] != Done)
        return false;
      bool remote = graph.jobs[p].worker != graph.jobs[j].worker;
      at = std::max(at, ref.end[p] + (remote ? options.transferTime : 0));
    }
    return true;
  };
  auto ready = [&](uint32_t j, int64_t now) {
    int64_t at;
    return state[j] == Waiting && inputs(j, at) && at <= now;
  };
  auto fits = [&](uint32_t j) {
    const Job &job = graph.jobs[j];
    if (orderMode || options.memoryCap.empty() ||
        options.memoryCap[job.worker] < 0)
      return true;
    return live[job.worker] + job.acquire <= options.memoryCap[job.worker];
  };
  auto busy = [&](size_t w) {
    for (uint32_t j = 0; j < numJobs; ++j)
      if (state[j] == Running && size_t(graph.jobs[j].worker) == w)
        return true;
    return false;
  };
  auto pick = [&](size_t w, int64_t now) -> int64_t {
    if (orderMode) {
      size_t next = ref.workerOrder[w].size();
      if (next < graph.order[w].size() && ready(graph.order[w][next], now))
        return graph.order[w][next];
      return -1;
    }
    int64_t best = -1;
    for (uint32_t j = 0; j < numJobs; ++j) {
      if (size_t(graph.jobs[j].worker) != w || !ready(j, now) || !fits(j))
        continue;
      if (best < 0 || graph.jobs[j].priority < graph.jobs[best].priority)
        best = j;
    }
    return best;
  };

  size_t done = 0;
  int64_t now = 0;
  for (;;) {
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t j = 0; j < numJobs; ++j) {
        if (state[j] != Running || ref.end[j] > now)
          continue;
        state[j] = Done;
        ++done;
        if (int64_t k = graph.jobs[j].releases; k >= 0) {
          const Job &done = graph.jobs[j], &owner = graph.jobs[k];
          live[owner.worker] -=
              done.releaseUnits < 0 ? owner.acquire : done.releaseUnits;
          liveBytes[owner.worker] -=
              done.releaseBytes < 0 ? owner.acquireBytes : done.releaseBytes;
        }
      }
      for (size_t w = 0; w < numWorkers; ++w) {
        int64_t j = busy(w) ? -1 : pick(w, now);
        if (j < 0)
          continue;
        const Job &job = graph.jobs[j];
        state[j] = Running;
        ref.start[j] = now;
        ref.end[j] = now + job.duration;
        ref.workerOrder[w].push_back(j);
        live[w] += job.acquire;
        liveBytes[w] += job.acquireBytes;
        ref.peakLive[w] = std::max(ref.peakLive[w], live[w]);
        ref.peakLiveBytes[w] = std::max(ref.peakLiveBytes[w], liveBytes[w]);
        changed = true;
      }
    }
    if (done == numJobs)
      break;
    int64_t next = std::numeric_limits<int64_t>::max();
    for (uint32_t j = 0; j < numJobs; ++j) {
      int64_t at;
      if (state[j] == Running)
        next = std::min(next, ref.end[j]);
      else if (state[j] == Waiting && inputs(j, at) && at > now)
        next = std::min(next, at);
    }
    if (next == std::numeric_limits<int64_t>::max())
      return ref; // deadlock
    now = next;
  }
  ref.ok = true;
  for (int64_t e : ref.end)
    ref.makespan = std::max(ref.makespan, e);
  return ref;
}

enum class RandomMode { Plain, Memory, ExplicitOrder };

struct RandomCase {
  JobGraph graph;
  SimulationOptions options;
};

int64_t uniform(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

/// A random explicit order: per worker, either the restriction of a random
/// topological order (always runnable) or a random permutation (may
/// deadlock).
std::vector<std::vector<uint32_t>> randomOrder(std::mt19937 &rng,
                                               const JobGraph &graph) {
  size_t numJobs = graph.jobs.size();
  std::vector<uint32_t> jobs(numJobs);
  std::iota(jobs.begin(), jobs.end(), 0);
  if (uniform(rng, 0, 1)) {
    std::shuffle(jobs.begin(), jobs.end(), rng);
  } else {
    // Random topological order: repeatedly take a random job whose preds
    // are all taken (edges go from lower to higher index).
    std::vector<char> taken(numJobs, 0);
    jobs.clear();
    while (jobs.size() < numJobs) {
      std::vector<uint32_t> free;
      for (uint32_t j = 0; j < numJobs; ++j) {
        bool ok = !taken[j];
        for (uint32_t e = graph.predBegin[j]; ok && e < graph.predBegin[j + 1];
             ++e)
          ok = taken[graph.preds[e]];
        if (ok)
          free.push_back(j);
      }
      uint32_t j = free[uniform(rng, 0, free.size() - 1)];
      taken[j] = 1;
      jobs.push_back(j);
    }
  }
  std::vector<std::vector<uint32_t>> order(graph.numWorkers);
  for (uint32_t j : jobs)
    order[graph.jobs[j].worker].push_back(j);
  return order;
}

RandomCase randomCase(std::mt19937 &rng, RandomMode mode) {
  RandomCase rc;
  JobGraph &graph = rc.graph;
  graph.numWorkers = uniform(rng, 1, 3);
  int64_t numJobs = uniform(rng, 0, 12);
  int64_t density = uniform(rng, 0, 60); // percent
  std::vector<char> released(numJobs, 0);
  for (int64_t j = 0; j < numJobs; ++j) {
    Job job = makeJob(uniform(rng, 0, graph.numWorkers - 1), uniform(rng, 0, 3),
                      uniform(rng, 0, 4));
    std::vector<uint32_t> preds;
    for (int64_t i = 0; i < j; ++i)
      if (uniform(rng, 0, 99) < density)
        preds.push_back(i);
    if (!preds.empty() && uniform(rng, 0, 9) == 0)
      preds.push_back(preds.front()); // duplicate edges are allowed
    std::shuffle(preds.begin(), preds.end(), rng);
    if (mode != RandomMode::Plain) {
      job.acquire = uniform(rng, 0, 2);
      job.acquireBytes = job.acquire * 100 + uniform(rng, 0, 5);
      // Mostly release the memory of a direct predecessor (so it has
      // started): all of it, or in two parts by two jobs (as a split
      // backward's B and W do); sometimes hold it to the end.
      std::vector<uint32_t> unreleased;
      for (uint32_t p : preds)
        if (released[p] < 2 && graph.jobs[p].acquire > 0)
          unreleased.push_back(p);
      if (!unreleased.empty() && uniform(rng, 0, 3) != 0) {
        uint32_t p = unreleased[uniform(rng, 0, unreleased.size() - 1)];
        const Job &owner = graph.jobs[p];
        job.releases = p;
        if (released[p] == 1) { // the rest
          job.releaseUnits = owner.acquire - owner.acquire / 2;
          job.releaseBytes = owner.acquireBytes - owner.acquireBytes / 2;
          released[p] = 2;
        } else if (uniform(rng, 0, 2) == 0) { // a first part
          job.releaseUnits = owner.acquire / 2;
          job.releaseBytes = owner.acquireBytes / 2;
          released[p] = 1;
        } else {
          released[p] = 2;
        }
      }
    }
    graph.addJob(job, preds);
  }
  if (graph.predBegin.empty())
    graph.predBegin = {0};
  rc.options.transferTime = uniform(rng, 0, 2);
  if (mode == RandomMode::Memory) {
    for (int32_t w = 0; w < graph.numWorkers; ++w) {
      int64_t maxAcquire = 0;
      for (const Job &job : graph.jobs)
        if (job.worker == w)
          maxAcquire = std::max(maxAcquire, job.acquire);
      rc.options.memoryCap.push_back(
          uniform(rng, 0, 3) == 0 ? -1 : maxAcquire + uniform(rng, 0, 1));
    }
  }
  if (mode == RandomMode::ExplicitOrder)
    graph.order = randomOrder(rng, graph);
  return rc;
}

struct RandomStats {
  int scheduled = 0; ///< cases with a timeline
  int capBound = 0;  ///< of those, cases whose caps changed the schedule
};

/// Compares `simulate` with the reference on `count` random cases.
RandomStats compareWithReference(RandomMode mode, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  RandomStats stats;
  for (int i = 0; i < count; ++i) {
    RandomCase rc = randomCase(rng, mode);
    SimulationResult result = simulate(rc.graph, rc.options);
    Reference ref = referenceSimulate(rc.graph, rc.options);
    SCOPED_TRACE("case " + std::to_string(i));
    EXPECT_EQ(result.timeline.has_value(), ref.ok) << result.error;
    if (!result.timeline || !ref.ok) {
      EXPECT_EQ(result.error.rfind("deadlock: ", 0), 0u) << result.error;
      EXPECT_FALSE(result.blockedJobs.empty());
      if (::testing::Test::HasFailure())
        return stats;
      continue;
    }
    ++stats.scheduled;
    if (!rc.options.memoryCap.empty()) {
      SimulationResult uncapped = simulate(rc.graph);
      stats.capBound +=
          uncapped.timeline && uncapped.timeline->start != ref.start;
    }
    const Timeline &t = *result.timeline;
    EXPECT_EQ(t.start, ref.start);
    EXPECT_EQ(t.end, ref.end);
    EXPECT_EQ(t.makespan, ref.makespan);
    EXPECT_EQ(t.workerOrder, ref.workerOrder);
    EXPECT_EQ(t.peakLive, ref.peakLive);
    EXPECT_EQ(t.peakLiveBytes, ref.peakLiveBytes);
    for (size_t w = 0; w < t.workerOrder.size(); ++w)
      for (size_t k = 0; k < t.workerOrder[w].size(); ++k)
        EXPECT_EQ(t.position[t.workerOrder[w][k]], int64_t(k));
    if (::testing::Test::HasFailure())
      return stats; // one failing case is enough output
  }
  return stats;
}

TEST(ListSchedulerRandom, MatchesReference) {
  RandomStats stats = compareWithReference(RandomMode::Plain, 1, 20000);
  EXPECT_EQ(stats.scheduled, 20000); // no caps, no order: never stuck
}

TEST(ListSchedulerRandom, WithMemoryCapsMatchesReference) {
  RandomStats stats = compareWithReference(RandomMode::Memory, 2, 20000);
  std::printf("memory caps: %d of 20000 cases scheduled, %d changed by caps\n",
              stats.scheduled, stats.capBound);
  EXPECT_GT(stats.scheduled, 5000);
  EXPECT_GT(stats.capBound, 1000);
}

TEST(ListSchedulerRandom, ExplicitOrderMatchesReference) {
  RandomStats stats = compareWithReference(RandomMode::ExplicitOrder, 3, 20000);
  std::printf("explicit order: %d of 20000 cases scheduled\n", stats.scheduled);
  EXPECT_GT(stats.scheduled, 5000);
}

//===----------------------------------------------------------------------===//
// Scale
//===----------------------------------------------------------------------===//

TEST(ListSchedulerScale, MillionJobs1F1B) {
  using Clock = std::chrono::steady_clock;
  const int S = 64, B = 8192;
  Clock::time_point t0 = Clock::now();
  Pipeline p = buildPipeline(S, B, 1, 2, PipelinePriority::BackwardFirst);
  Clock::time_point t1 = Clock::now();
  SimulationResult result = simulate(p.graph, oneFOneBCaps(S));
  Clock::time_point t2 = Clock::now();
  auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  std::printf("%zu jobs on %d workers: build %.1f ms, simulate %.1f ms\n",
              p.graph.jobs.size(), S, ms(t1 - t0), ms(t2 - t1));
  ASSERT_SCHEDULED(result);
  EXPECT_EQ(result.timeline->makespan, int64_t(B + S - 1) * 3);
  EXPECT_EQ(result.timeline->peakLive[0], S);
}

} // namespace
