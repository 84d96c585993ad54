//===- ProgramReplayTest.cpp - timing the rank programs themselves --------===//

#include "pipesched/Scheduling/ProgramReplay.h"

#include <gtest/gtest.h>

using namespace pipesched::scheduling;

namespace {
/// Two workers: J0 (2 ticks) on worker 0 makes a tensor that J2 (1 tick)
/// reads on worker 1 after J1 (10 ticks); one message of 100 bytes.
struct TwoWorkers {
  CommProblem problem;
  CommPlan plan;
  TwoWorkers() {
    problem.numWorkers = 2;
    problem.numStages = 2;
    problem.jobs = {
        {0, 0, 0, 0, Direction::Forward, 0, 2, 0, -1},
        {1, 1, 1, 1, Direction::Forward, 0, 10, 0, -1},
        {1, 1, 1, 0, Direction::Forward, 12, 13, 1, -1},
    };
    problem.inputBegin = {0, 0, 0, 1};
    problem.inputs = {0};
    plan.messages = {{Message::Activation, 0, 1, 0, 0, /*producer=*/0, 0, 100}};
    plan.programs = {{{PlanOp::Job, 0}, {PlanOp::Send, 0}},
                     {{PlanOp::Job, 1}, {PlanOp::Recv, 0}, {PlanOp::Job, 2}}};
    plan.owns = {{0}, {1}};
  }
};
} // namespace

TEST(ProgramReplay, SenderWaitsForItsReceiver) {
  TwoWorkers t;
  ReplayCosts costs;
  costs.latency = 1;
  costs.perByte = 0.01; // 100 bytes: 1 + 1 = 2 ticks
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  // Worker 0 posts its send at 2; worker 1 posts the receive only after J1,
  // at 10: the message moves from 10 to 12, and the sender waits for it.
  EXPECT_EQ(r.finish[0], 12);
  EXPECT_EQ(r.jobStart[2], 12);
  EXPECT_EQ(r.jobEnd[2], 13);
  EXPECT_EQ(r.makespan, 13);
}

TEST(ProgramReplay, AbstractTransferAndReceiverFirst) {
  TwoWorkers t;
  // The receiver posts first (no job before it): the message moves as soon
  // as the sender posts, and takes `transfer` without a link model.
  t.plan.programs[1] = {{PlanOp::Recv, 0}, {PlanOp::Job, 1}, {PlanOp::Job, 2}};
  ReplayCosts costs;
  costs.transfer = 3;
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  EXPECT_EQ(r.finish[0], 5);   // J0 0..2, the message 2..5
  EXPECT_EQ(r.jobStart[1], 5); // worker 1 waited in its receive
  EXPECT_EQ(r.makespan, 16);   // J1 5..15, J2 15..16
}

TEST(ProgramReplay, MessagesBetweenNodesTakeTheirLink) {
  TwoWorkers t;
  ReplayCosts costs;
  costs.latency = 1;
  costs.perByte = 0.01; // inside a node: 2 ticks for 100 bytes
  costs.interLatency = 3;
  costs.interPerByte = 0.05; // between nodes: 3 + 5 = 8 ticks
  costs.nodeOf = {0, 0};
  EXPECT_EQ(costs.messageBetween(100, 0, 1), 2);
  EXPECT_EQ(replayPrograms(t.problem, t.plan, costs).makespan, 13);
  costs.nodeOf = {0, 1};
  EXPECT_EQ(costs.messageBetween(100, 0, 1), 8);
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  EXPECT_EQ(r.jobStart[2], 18); // the receive posted at 10, then 8 ticks
  EXPECT_EQ(r.makespan, 19);
  // Without a link model, each class takes its transfer.
  costs.perByte = costs.interPerByte = -1;
  costs.transfer = 1;
  costs.interTransfer = 4;
  EXPECT_EQ(costs.messageBetween(100, 0, 1), 4);
  costs.interLatency = -1;
  EXPECT_NE(costs.check(), "");
}

TEST(ProgramReplay, CollectivesAcrossNodes) {
  ReplayCosts costs;
  costs.latency = 1;
  costs.perByte = 0.001; // inside a node
  costs.interLatency = 10;
  costs.interPerByte = 0.01; // between nodes, 10 times slower
  // 8 members, 4 per node on 2 nodes, 8000 bytes.
  costs.nodeOf = {0, 0, 0, 0, 1, 1, 1, 1};
  std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  // Flat ring: 14 steps of (10 + 1000 * 0.01) = 280. Hierarchical: a
  // reduce in each node, 3 steps of (1 + 2000 * 0.001) = 9, a ring over
  // the 2 nodes, 2 steps of (10 + 4000 * 0.01) = 100, a broadcast, 9: 118.
  EXPECT_DOUBLE_EQ(costs.collectiveOver(8000, all, true), 118);
  // A reduce onto one root: no broadcast; flat 7 * 20 = 140, hierarchical
  // 9 + 1 * 50 = 59.
  EXPECT_DOUBLE_EQ(costs.collectiveOver(8000, all, false), 59);
  // Members on one node: the ring over the cost's link, 2 * 3 steps of
  // (1 + 2000 * 0.001).
  EXPECT_DOUBLE_EQ(costs.collectiveOver(8000, {0, 1, 2, 3}, true), 18);
  EXPECT_DOUBLE_EQ(costs.collectiveOver(8000, {0, 1, 2, 3}, true),
                   costs.collective(8000, 4, true));
  // One member on each of two nodes: the flat ring and the hierarchy agree,
  // 2 steps of (10 + 4000 * 0.01).
  EXPECT_DOUBLE_EQ(costs.collectiveOver(8000, {3, 4}, true), 100);
}

TEST(ProgramReplay, CollectivesAndOptimizer) {
  TwoWorkers t;
  // After their jobs, both reduce stage 0's 1000 bytes, then step.
  t.plan.reductions = {{0, {0, 1}, {0, 1}, 1000}};
  t.plan.programs[0].push_back({PlanOp::Collective, 0});
  t.plan.programs[1].push_back({PlanOp::Collective, 0});
  t.plan.programs[0].push_back({PlanOp::OptimizerStep, 0});
  t.plan.programs[1].push_back({PlanOp::OptimizerStep, 0});
  ReplayCosts costs;
  costs.latency = 1;
  costs.perByte = 0.01;
  costs.optimizer = {4, 0};
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  // The last member arrives at 13; a ring all-reduce over 2 members is
  // 2 steps of (1 + 500 x 0.01) = 12; then the optimizer step, 4.
  EXPECT_EQ(costs.collective(1000, 2, true), 12);
  EXPECT_EQ(costs.collective(1000, 2, false), 6);
  EXPECT_EQ(r.finish[0], 29);
  EXPECT_EQ(r.finish[1], 29);

  // A measured all-reduce replaces the ring: 40 ticks for 2000 bytes is 20
  // for these 1000 (a reduce onto one root: half).
  costs.reduce = 40;
  costs.reduceBytes = 2000;
  EXPECT_EQ(costs.collective(1000, 2, true), 20);
  EXPECT_EQ(costs.collective(1000, 2, false), 10);
  EXPECT_EQ(costs.collective(1000, 1, true), 0);
  r = replayPrograms(t.problem, t.plan, costs);
  EXPECT_EQ(r.finish[0], 13 + 20 + 4);
}

TEST(ProgramReplay, GroupEndsWithItsLastMessage) {
  TwoWorkers t;
  // Worker 0 also receives a tensor worker 1 sends after J1, in the same
  // group as its send: the group ends when both have moved.
  t.plan.messages.push_back({Message::Gradient, 1, 0, 1, 0, 1, 1, 50});
  t.plan.programs[0] = {{PlanOp::Job, 0}, {PlanOp::Send, 0, 0}, {PlanOp::Recv, 1, 0}};
  t.plan.programs[1] = {{PlanOp::Recv, 0}, {PlanOp::Job, 1}, {PlanOp::Send, 1},
                        {PlanOp::Job, 2}};
  ReplayCosts costs;
  costs.transfer = 1;
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  // Message 0: 2..3; J1 3..13; message 1: 13..14 ends worker 0's group.
  EXPECT_EQ(r.finish[0], 14);
  EXPECT_EQ(r.jobStart[2], 14);
}

TEST(ProgramReplay, DurationsAsTheRuntimeRunsThem) {
  TwoWorkers t;
  // J0 simulated as 2 ticks (an overlapped pair, say) but run as 6: the
  // send posts at 6, the receiver still waits for J1 (10), J2 at 12..13.
  ReplayCosts costs;
  costs.transfer = 2;
  costs.durations = {6, 10, 1};
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  ASSERT_EQ(r.verify(t.problem, t.plan, costs), "");
  EXPECT_EQ(r.jobEnd[0], 6);
  EXPECT_EQ(r.finish[0], 12);
  EXPECT_EQ(r.makespan, 13);
  // Checked against the durations it was given, not the simulated ones.
  ReplayCosts simulated;
  simulated.transfer = 2;
  EXPECT_NE(r.verify(t.problem, t.plan, simulated), "");
}

TEST(ProgramReplay, StuckProgramsAreReported) {
  TwoWorkers t;
  t.plan.programs[0] = {{PlanOp::Job, 0}}; // the send is missing
  ReplayCosts costs;
  ReplayResult r = replayPrograms(t.problem, t.plan, costs);
  EXPECT_NE(r.error.find("worker 1 waits at op 1"), std::string::npos) << r.error;
  EXPECT_NE(r.verify(t.problem, t.plan, costs), "");
  ReplayCosts negative;
  negative.latency = -1;
  EXPECT_NE(negative.check(), "");
}
