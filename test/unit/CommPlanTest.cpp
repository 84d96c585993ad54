//===- CommPlanTest.cpp - the communication planner, without MLIR ---------===//

#include "pipesched/Scheduling/CommPlan.h"
#include "pipesched/Scheduling/ListScheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

using namespace pipesched::scheduling;

namespace {
/// A chain of S stages on B microbatches, jobs placed by `worker(s, b, d)`
/// and `owner(s, b, d)` and timed by the list scheduler (forward 1,
/// backward 2, backwards first).
template <class WorkerFn, class OwnerFn>
CommProblem chain(int64_t S, int64_t B, int32_t W, WorkerFn worker,
                  OwnerFn owner, int64_t prefetch = 1) {
  CommProblem p;
  p.numWorkers = W;
  p.numStages = S;
  p.prefetchDepth = prefetch;
  p.actBytes = 64;
  p.weightBytes = 256;
  JobGraph g;
  g.numWorkers = W;
  std::vector<std::vector<uint32_t>> preds;
  auto add = [&](int64_t s, int64_t b, Direction d,
                 std::vector<uint32_t> inputs) {
    PlannedJob j;
    j.stage = s;
    j.microbatch = b;
    j.direction = d;
    j.worker = worker(s, b, d);
    j.owner = owner(s, b, d);
    p.jobs.push_back(j);
    Job sj;
    sj.worker = j.worker;
    sj.duration = d == Direction::Forward ? 1 : 2;
    sj.priority = d == Direction::Forward ? 1 : 0;
    g.addJob(sj, inputs);
    preds.push_back(std::move(inputs));
    return uint32_t(p.jobs.size() - 1);
  };
  for (int64_t b = 0; b < B; ++b) {
    std::vector<uint32_t> fwd(S);
    for (int64_t s = 0; s < S; ++s)
      fwd[s] = add(s, b, Direction::Forward,
                   s ? std::vector<uint32_t>{fwd[s - 1]}
                     : std::vector<uint32_t>{});
    uint32_t grad = 0;
    for (int64_t s = S - 1; s >= 0; --s) {
      std::vector<uint32_t> in{s == S - 1 ? fwd[s] : grad};
      if (s)
        in.push_back(fwd[s - 1]);
      grad = add(s, b, Direction::Backward, in);
    }
  }
  SimulationResult r = simulate(g);
  EXPECT_TRUE(r.timeline) << r.error;
  p.inputBegin.push_back(0);
  for (size_t i = 0; i < p.jobs.size(); ++i) {
    p.jobs[i].start = r.timeline->start[i];
    p.jobs[i].end = r.timeline->end[i];
    p.jobs[i].position = r.timeline->position[i];
    p.inputs.insert(p.inputs.end(), preds[i].begin(), preds[i].end());
    p.inputBegin.push_back(uint32_t(p.inputs.size()));
  }
  return p;
}

CommProblem gpipe(int64_t S, int64_t B, int32_t W) {
  auto byStage = [W](int64_t s, int64_t, Direction) { return int32_t(s % W); };
  return chain(S, B, W, byStage, byStage);
}

int count(const std::vector<PlanOp> &program, PlanOp::Kind kind) {
  int n = 0;
  for (const PlanOp &op : program)
    n += op.kind == kind;
  return n;
}
} // namespace

TEST(CommPlan, GPipeSendsEachTensorOnceInTimeOrder) {
  CommProblem p = gpipe(2, 2, 2);
  ASSERT_EQ(p.check(), "");
  CommPlan plan = planCommunication(p);
  EXPECT_EQ(plan.verify(p), "");
  // Two activations forward, two gradients back, tags in time order.
  ASSERT_EQ(plan.messages.size(), 4u);
  EXPECT_EQ(plan.messages[0].kind, Message::Activation);
  EXPECT_EQ(plan.messages[3].kind, Message::Gradient);
  for (size_t i = 0; i < plan.messages.size(); ++i)
    EXPECT_EQ(plan.messages[i].tag, int64_t(i));
  EXPECT_EQ(plan.owns, (std::vector<std::vector<int64_t>>{{0}, {1}}));
  // No collectives (one member per stage), one optimizer step per owner,
  // last in the program.
  for (const std::vector<PlanOp> &program : plan.programs) {
    EXPECT_EQ(count(program, PlanOp::Collective), 0);
    EXPECT_EQ(count(program, PlanOp::OptimizerStep), 1);
    EXPECT_EQ(program.back().kind, PlanOp::OptimizerStep);
  }
  Traffic t = accountTraffic(p, plan);
  EXPECT_EQ(t.activationsReceived, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(t.gradientsReceived, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(t.sentBytes, (std::vector<int64_t>{128, 128}));
}

TEST(CommPlan, DataParallelAllReducesEveryStage) {
  auto byMicrobatch = [](int64_t, int64_t b, Direction) { return int32_t(b % 2); };
  CommProblem p = chain(2, 4, 2, byMicrobatch, byMicrobatch);
  CommPlan plan = planCommunication(p);
  EXPECT_EQ(plan.verify(p), "");
  EXPECT_TRUE(plan.messages.empty());
  ASSERT_EQ(plan.reductions.size(), 2u);
  for (const Reduction &r : plan.reductions) {
    EXPECT_TRUE(r.isAllReduce());
    EXPECT_EQ(r.members, (std::vector<int32_t>{0, 1}));
  }
  Traffic t = accountTraffic(p, plan);
  EXPECT_EQ(t.sentBytes, (std::vector<int64_t>{512, 512}));
  EXPECT_EQ(t.receivedBytes, (std::vector<int64_t>{512, 512}));
}

TEST(CommPlan, TrafficSaturatesInsteadOfOverflowing) {
  // Byte counts of huge costs stop at INT64_MAX (scripts/sanitize.sh: UBSan
  // caught the sums overflowing, which release builds wrapped to negatives).
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // GPipe: four activations out of worker 0 and four gradients out of
  // worker 1, of 2^62 + 1 bytes each.
  CommProblem p = gpipe(2, 4, 2);
  p.actBytes = int64_t(1) << 62 | 1;
  Traffic t = accountTraffic(p, planCommunication(p));
  EXPECT_EQ(t.sentBytes, (std::vector<int64_t>{kMax, kMax}));
  EXPECT_EQ(t.receivedBytes, (std::vector<int64_t>{kMax, kMax}));
  // Data parallel: every worker all-reduces both stages' gradients.
  auto byMicrobatch = [](int64_t, int64_t b, Direction) { return int32_t(b % 2); };
  p = chain(2, 4, 2, byMicrobatch, byMicrobatch);
  p.weightBytes = kMax;
  t = accountTraffic(p, planCommunication(p));
  EXPECT_EQ(t.sentBytes, (std::vector<int64_t>{kMax, kMax}));
  EXPECT_EQ(t.receivedBytes, (std::vector<int64_t>{kMax, kMax}));
  // Sharded: stage s reduced onto its owner s from three workers, whose
  // share (bytes times the two others) overflows alone.
  auto byMicrobatch3 = [](int64_t, int64_t b, Direction) { return int32_t(b % 3); };
  auto byStage = [](int64_t s, int64_t, Direction) { return int32_t(s); };
  p = chain(3, 3, 3, byMicrobatch3, byStage);
  p.weightBytes = int64_t(1) << 62;
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.verify(p), "");
  ASSERT_FALSE(plan.reductions.empty());
  t = accountTraffic(p, plan);
  for (int64_t received : t.receivedBytes)
    EXPECT_EQ(received, kMax);
}

TEST(CommPlan, ShardedWeightsAreFetchedAheadAndReleased) {
  // Every job on worker b % 2, stage s's weights on worker s (FSDP-like).
  auto byMicrobatch = [](int64_t, int64_t b, Direction) { return int32_t(b % 2); };
  auto byStage = [](int64_t s, int64_t, Direction) { return int32_t(s); };
  for (int64_t depth : {0, 1, 3}) {
    CommProblem p = chain(2, 2, 2, byMicrobatch, byStage, depth);
    CommPlan plan = planCommunication(p);
    EXPECT_EQ(plan.verify(p), "") << "prefetch depth " << depth;
    int fetches = 0, releases = 0;
    for (const std::vector<PlanOp> &program : plan.programs) {
      releases += count(program, PlanOp::ReleaseWeights);
      for (const PlanOp &op : program)
        fetches += op.kind == PlanOp::Recv &&
                   plan.messages[op.index].kind == Message::Weights;
    }
    EXPECT_EQ(fetches, releases);
    EXPECT_GT(fetches, 0);
    // One reduce per stage onto its single owner.
    for (const Reduction &r : plan.reductions)
      EXPECT_FALSE(r.isAllReduce());
    // Each worker sends the other its gradient of the other's stage and
    // receives its own stage's (256 bytes each way: the root receives one
    // gradient per other member, not its own), besides the weights each
    // fetch moves from the stage's owner (256 bytes).
    std::vector<int64_t> sent(2, 256), received(2, 256);
    for (int32_t w : {0, 1})
      for (const PlanOp &op : plan.programs[w])
        if (op.kind == PlanOp::Recv &&
            plan.messages[op.index].kind == Message::Weights) {
          received[w] += 256;
          sent[plan.messages[op.index].stage] += 256; // stage s's owner is s
        }
    Traffic t = accountTraffic(p, plan);
    EXPECT_EQ(t.sentBytes, sent);
    EXPECT_EQ(t.receivedBytes, received);
  }
}

TEST(CommPlan, CheckRefusesBadInput) {
  CommProblem p = gpipe(2, 1, 2);
  CommProblem bad = p;
  bad.prefetchDepth = -1;
  EXPECT_EQ(bad.check(), "prefetch-depth must be non-negative");
  bad = p;
  bad.jobs[1].position = bad.jobs[0].position; // two jobs on one slot? not same worker
  bad.jobs[0].worker = bad.jobs[1].worker;
  EXPECT_NE(bad.check(), "");
  bad = p;
  bad.jobs[1].start = 0; // before its input ends
  bad.jobs[1].end = 1;
  EXPECT_NE(bad.check().find("starts before its input"), std::string::npos);
  bad = p;
  bad.jobs[0].worker = 7;
  EXPECT_NE(bad.check().find("is placed outside [0, 2)"), std::string::npos);
}

TEST(CommPlan, VerifyFindsBrokenPlans) {
  CommProblem p = gpipe(2, 2, 2);
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.verify(p), "");

  CommPlan noStep = plan;
  noStep.programs[0].pop_back(); // the optimizer step
  EXPECT_NE(noStep.verify(p).find("never steps its optimizer"), std::string::npos);

  CommPlan lostRecv = plan;
  auto &prog = lostRecv.programs[1];
  for (size_t i = 0; i < prog.size(); ++i)
    if (prog[i].kind == PlanOp::Recv) {
      prog.erase(prog.begin() + long(i));
      break;
    }
  EXPECT_NE(lostRecv.verify(p), "");

  // Receiving the second activation first on rank 1: a job consumes a
  // tensor not yet there, or the programs no longer match.
  CommPlan swapped = plan;
  std::vector<size_t> recvs;
  for (size_t i = 0; i < swapped.programs[1].size(); ++i)
    if (swapped.programs[1][i].kind == PlanOp::Recv)
      recvs.push_back(i);
  ASSERT_GE(recvs.size(), 2u);
  std::swap(swapped.programs[1][recvs[0]].index,
            swapped.programs[1][recvs[1]].index);
  EXPECT_NE(swapped.verify(p), "");

  // Only transfers are grouped.
  CommPlan groupedJob = plan;
  groupedJob.programs[0].front().group = 99;
  EXPECT_NE(groupedJob.verify(p).find("a group holds an op that is not a transfer"),
            std::string::npos);
}

// The position of the first op of `program` that `pred` accepts.
template <class Pred> long find(const std::vector<PlanOp> &program, Pred pred) {
  auto it = std::find_if(program.begin(), program.end(), pred);
  EXPECT_NE(it, program.end());
  return long(it - program.begin());
}

// Each rule of check() and verify() broken alone, with its exact message.
TEST(CommPlan, EachRuleHasItsMessage) {
  CommProblem p = gpipe(2, 2, 2);
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.verify(p), "");
  CommProblem bad = p;
  bad.numWorkers = 0;
  EXPECT_EQ(bad.check(), "the number of workers must be positive");
  bad = p;
  bad.inputBegin.pop_back();
  EXPECT_EQ(bad.check(), "the input lists do not match the jobs");

  CommPlan repeated = plan;
  auto isJob = [](const PlanOp &op) { return op.kind == PlanOp::Job; };
  long first = find(repeated.programs[0], isJob);
  repeated.programs[0].insert(repeated.programs[0].begin() + first + 1,
                              repeated.programs[0][size_t(first)]);
  EXPECT_EQ(repeated.verify(p), "worker 0, op 1: forward (s=0, b=0) is out of "
                                "place, repeated or out of order");

  CommPlan lostRecv = plan;
  auto isRecv = [](const PlanOp &op) { return op.kind == PlanOp::Recv; };
  lostRecv.programs[1].erase(lostRecv.programs[1].begin() +
                             find(lostRecv.programs[1], isRecv));
  EXPECT_EQ(lostRecv.verify(p), "worker 1, op 0: forward (s=1, b=0) consumes "
                                "forward (s=0, b=0), which is not on worker 1");

  CommPlan twice = plan;
  twice.programs[0].push_back(twice.programs[0].back()); // the optimizer step
  EXPECT_EQ(twice.verify(p), "worker 0, op 9: optimizer step of stage 0 on a "
                             "worker that does not own it, or twice");
}

// The weight rules, on sharded weights: stage s's weights on worker s,
// every job on worker b % 2 (FSDP-like).
TEST(CommPlan, EachWeightRuleHasItsMessage) {
  auto byMicrobatch = [](int64_t, int64_t b, Direction) {
    return int32_t(b % 2);
  };
  auto byStage = [](int64_t s, int64_t, Direction) { return int32_t(s); };
  CommProblem p = chain(2, 2, 2, byMicrobatch, byStage, 1);
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.verify(p), "");
  auto isFetch = [&](const PlanOp &op) {
    return op.kind == PlanOp::Recv &&
           plan.messages[op.index].kind == Message::Weights;
  };

  CommPlan noFetch = plan;
  noFetch.programs[1].erase(noFetch.programs[1].begin() +
                            find(noFetch.programs[1], isFetch));
  EXPECT_EQ(
      noFetch.verify(p),
      "worker 1, op 1: forward (s=0, b=1) runs without stage 0's weights");

  CommPlan owned = plan;
  owned.owns[1] = {0, 1};
  EXPECT_EQ(owned.verify(p), "worker 1, op 1: fetches stage 0's weights, which "
                             "it owns or holds already");

  CommPlan release = plan;
  release.programs[1].insert(release.programs[1].begin(),
                             PlanOp{PlanOp::ReleaseWeights, 0});
  EXPECT_EQ(
      release.verify(p),
      "worker 1, op 0: releases stage 0's weights, which it does not hold");
}

// A tensor consumed on many workers is sent once to each, however many of
// them (past the planner's short list of receivers per producer, a table)
// and however many of its consumers share a worker.
TEST(CommPlan, WideFanOutSendsOncePerReceivingWorker) {
  const int32_t W = 20;
  CommProblem p;
  p.numWorkers = W;
  p.numStages = 2;
  p.actBytes = 64;
  auto job = [&](int32_t worker, int64_t stage, int64_t b, int64_t start,
                 int64_t position) {
    PlannedJob j;
    j.worker = j.owner = worker;
    j.stage = stage;
    j.microbatch = b;
    j.start = start;
    j.end = start + 1;
    j.position = position;
    p.jobs.push_back(j);
  };
  job(0, 0, 0, 0, 0); // the producer
  for (int32_t w = 1; w < W; ++w)
    job(w, 1, 0, 1, 0);
  for (int32_t w = 1; w < W; ++w) // a second consumer on every worker
    job(w, 1, 1, 2, 1);
  p.inputBegin.push_back(0);
  p.inputBegin.push_back(0);
  for (size_t i = 1; i < p.jobs.size(); ++i) {
    p.inputs.push_back(0);
    p.inputBegin.push_back(uint32_t(p.inputs.size()));
  }
  ASSERT_EQ(p.check(), "");
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.messages.size(), size_t(W - 1));
  std::vector<int> received(W, 0);
  for (const Message &m : plan.messages) {
    EXPECT_EQ(m.sender, 0);
    EXPECT_EQ(m.producer, 0u);
    ++received[size_t(m.receiver)];
  }
  for (int32_t w = 1; w < W; ++w)
    EXPECT_EQ(received[size_t(w)], 1) << "worker " << w;
  // Each received before its first consumer, the worker's first job.
  for (int32_t w = 1; w < W; ++w) {
    const std::vector<PlanOp> &program = plan.programs[size_t(w)];
    auto first = [&](PlanOp::Kind kind) {
      return std::find_if(program.begin(), program.end(),
                          [&](const PlanOp &op) { return op.kind == kind; });
    };
    EXPECT_LT(first(PlanOp::Recv), first(PlanOp::Job)) << "worker " << w;
  }
}

// Any placement of a chain yields a plan that verifies: every input local,
// weights held, one optimizer step per owner, deadlock-free.
TEST(CommPlan, RandomPlacementsVerify) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int32_t W = 1 + int32_t(rng() % 4);
    int64_t S = 1 + int64_t(rng() % 4), B = 1 + int64_t(rng() % 4);
    std::vector<int32_t> workers(static_cast<size_t>(S * B * 2));
    std::vector<int32_t> owners(static_cast<size_t>(S));
    for (int32_t &w : workers)
      w = int32_t(rng() % uint32_t(W));
    for (int32_t &o : owners)
      o = int32_t(rng() % uint32_t(W));
    auto worker = [&](int64_t s, int64_t b, Direction d) {
      return workers[size_t((s * B + b) * 2 + (d == Direction::Forward ? 0 : 1))];
    };
    auto owner = [&](int64_t s, int64_t, Direction) { return owners[size_t(s)]; };
    CommProblem p = chain(S, B, W, worker, owner, int64_t(rng() % 3));
    ASSERT_EQ(p.check(), "") << "trial " << trial;
    CommPlan plan = planCommunication(p);
    ASSERT_EQ(plan.verify(p), "") << "trial " << trial;
  }
}

TEST(CommPlan, TiedStagesOnTwoWorkersSumAcrossThem) {
  CommProblem p = gpipe(2, 2, 2);
  p.tiedGroups = {{0, 1}};
  ASSERT_EQ(p.check(), "");
  CommPlan plan = planCommunication(p);
  EXPECT_EQ(plan.verify(p), "");
  ASSERT_EQ(plan.tied.size(), 1u);
  EXPECT_EQ(plan.tied[0].members, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(plan.tied[0].bytes, 256);
  // Each worker ends with the tied reduction, then its optimizer step.
  for (const std::vector<PlanOp> &program : plan.programs) {
    ASSERT_GE(program.size(), 2u);
    EXPECT_EQ(program[program.size() - 2].kind, PlanOp::TiedGrad);
    EXPECT_EQ(program.back().kind, PlanOp::OptimizerStep);
  }
  Traffic t = accountTraffic(p, plan);
  EXPECT_EQ(t.tiedReductions, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(t.tiedBytes, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(t.sentBytes, (std::vector<int64_t>{128 + 256, 128 + 256}));
}

TEST(CommPlan, TiedStagesOwnedTogetherSumLocally) {
  // DDP: microbatch b on worker b, every worker a replica of every stage.
  auto byMicrobatch = [](int64_t, int64_t b, Direction) { return int32_t(b); };
  CommProblem p = chain(2, 2, 2, byMicrobatch, byMicrobatch);
  p.tiedGroups = {{1, 0}};
  ASSERT_EQ(p.check(), "");
  CommPlan plan = planCommunication(p);
  EXPECT_EQ(plan.verify(p), "");
  ASSERT_EQ(plan.tied.size(), 2u);
  EXPECT_EQ(plan.tied[0].members, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.tied[1].members, (std::vector<int32_t>{1}));
  for (const std::vector<PlanOp> &program : plan.programs) {
    EXPECT_EQ(count(program, PlanOp::Collective), 2); // the stages' all-reduces
    EXPECT_EQ(count(program, PlanOp::TiedGrad), 1);
    EXPECT_EQ(program[program.size() - 3].kind, PlanOp::TiedGrad);
  }
  Traffic t = accountTraffic(p, plan);
  EXPECT_EQ(t.tiedReductions, (std::vector<int64_t>{0, 0}));
}

TEST(CommPlan, VerifyRefusesAnOptimizerStepBeforeTheTiedReduction) {
  CommProblem p = gpipe(2, 2, 2);
  p.tiedGroups = {{0, 1}};
  CommPlan plan = planCommunication(p);
  std::vector<PlanOp> &program = plan.programs[0];
  std::swap(program[program.size() - 2], program.back());
  EXPECT_EQ(plan.verify(p).rfind("worker 0, op ", 0), 0u);
  EXPECT_NE(plan.verify(p).find("optimizer step of tied stage 0 before its "
                                "tied reduction"),
            std::string::npos);
}

TEST(CommPlan, CheckRefusesInvalidTies) {
  CommProblem p = gpipe(2, 1, 2);
  p.tiedGroups = {{0}};
  EXPECT_EQ(p.check(), "tied group 0 has fewer than two stages");
  p.tiedGroups = {{0, 2}};
  EXPECT_EQ(p.check(), "tied group 0 names stage 2, outside [0, 2)");
  p.tiedGroups = {{0, 1}, {1, 0}};
  EXPECT_EQ(p.check(), "stage 1 is tied twice");
}

TEST(CommPlan, VerifyRefusesAWeightGradientAfterTheTiedReduction) {
  CommProblem p = gpipe(2, 2, 2);
  p.tiedGroups = {{0, 1}};
  CommPlan plan = planCommunication(p);
  std::vector<PlanOp> &program = plan.programs[1];
  size_t tie = 0, last = 0;
  for (size_t i = 0; i < program.size(); ++i) {
    if (program[i].kind == PlanOp::TiedGrad)
      tie = i;
    if (program[i].kind == PlanOp::Job &&
        p.jobs[program[i].index].direction == Direction::Backward)
      last = i;
  }
  ASSERT_LT(last, tie);
  PlanOp moved = program[tie];
  program.erase(program.begin() + tie);
  program.insert(program.begin() + last, moved);
  EXPECT_NE(plan.verify(p).find("computes a weight gradient of tied stage 1 "
                                "after its tied reduction"),
            std::string::npos)
      << plan.verify(p);
}

TEST(CommPlan, VerifyRefusesAGradientReductionAfterTheTiedReduction) {
  // DDP: the stages' all-reduces come before the local tied sum.
  auto byMicrobatch = [](int64_t, int64_t b, Direction) { return int32_t(b); };
  CommProblem p = chain(2, 2, 2, byMicrobatch, byMicrobatch);
  p.tiedGroups = {{0, 1}};
  CommPlan plan = planCommunication(p);
  ASSERT_EQ(plan.verify(p), "");
  std::vector<PlanOp> &program = plan.programs[0];
  size_t tie = 0, reduce = 0;
  for (size_t i = 0; i < program.size(); ++i) {
    if (program[i].kind == PlanOp::TiedGrad)
      tie = i;
    if (program[i].kind == PlanOp::Collective && tie == 0)
      reduce = i;
  }
  ASSERT_LT(reduce, tie);
  PlanOp moved = program[tie];
  program.erase(program.begin() + tie);
  program.insert(program.begin() + reduce, moved);
  EXPECT_NE(plan.verify(p).find("after its tied reduction"), std::string::npos)
      << plan.verify(p);
}
