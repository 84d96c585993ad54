// The count of queued GPU commands of the CUDA backend
// (src/cuda/command_ledger.h): ops with their commands, completion in
// order per stream, and when the host may queue more; and which stream an
// op's work is timed and counted on (program.h).
#include "cuda/command_ledger.h"
#include "program/program.h"

#include <gtest/gtest.h>

namespace {

using pipesched::runtime::cuda::CommandLedger;

constexpr bool kCompute = false, kComm = true;

// Opens an op, counts its commands and closes it, as the tracker does.
void op(CommandLedger &l, bool comm, size_t commands) {
  l.open(comm);
  ASSERT_TRUE(l.mayIssue(commands));
  l.issue(commands);
  l.close();
}

TEST(CommandLedger, BoundIsBelowCudasQueue) {
  EXPECT_GE(CommandLedger::kMaxQueuedCommands, 64u);
  EXPECT_LE(CommandLedger::kMaxQueuedCommands, 1024u);
}

TEST(CommandLedger, QueuesUpToTheBoundThenWaitsForTheOldest) {
  CommandLedger l(10);
  op(l, kCompute, 4);
  op(l, kCompute, 4);
  EXPECT_EQ(l.queued(), 8u);
  l.open(kCompute);
  EXPECT_TRUE(l.mayIssue(2));
  EXPECT_FALSE(l.mayIssue(3)); // 11 > 10: wait
  // The oldest op finishes: its commands leave the queue.
  ASSERT_EQ(l.nextToFinish(kCompute), std::optional<size_t>(0));
  l.finish(kCompute);
  EXPECT_EQ(l.queued(), 4u);
  EXPECT_TRUE(l.mayIssue(3));
  l.issue(3);
  EXPECT_EQ(l.queued(), 7u);
  EXPECT_EQ(l.ops(), 3u);
  EXPECT_EQ(l.finished(), 1u);
}

// The op being issued cannot finish: its end is not queued yet.
TEST(CommandLedger, OpenOpIsNotFinishable) {
  CommandLedger l(100);
  l.open(kComm);
  l.issue(5);
  EXPECT_EQ(l.nextToFinish(kComm), std::nullopt);
  EXPECT_EQ(l.oldestUnfinished(kComm), std::optional<size_t>(0));
  l.close();
  EXPECT_EQ(l.nextToFinish(kComm), std::optional<size_t>(0));
  l.finish(kComm);
  EXPECT_EQ(l.nextToFinish(kComm), std::nullopt);
  EXPECT_EQ(l.queued(), 0u);
  EXPECT_THROW(l.finish(kComm), std::logic_error);
}

// Each stream finishes in its own order; the cursors are independent.
TEST(CommandLedger, StreamsFinishIndependently) {
  CommandLedger l(100);
  op(l, kCompute, 3); // 0
  op(l, kComm, 5);    // 1
  op(l, kCompute, 2); // 2
  op(l, kComm, 7);    // 3
  EXPECT_EQ(l.nextToFinish(kCompute), std::optional<size_t>(0));
  EXPECT_EQ(l.nextToFinish(kComm), std::optional<size_t>(1));
  l.finish(kCompute);
  l.finish(kCompute);
  EXPECT_EQ(l.nextToFinish(kCompute), std::nullopt);
  EXPECT_EQ(l.queued(), 12u);
  EXPECT_EQ(l.oldestUnfinished(kComm), std::optional<size_t>(1));
  l.finish(kComm);
  EXPECT_EQ(l.oldestUnfinished(kComm), std::optional<size_t>(3));
  EXPECT_EQ(l.finished(), 3u);
}

// An op larger than the bound: it waits until everything before it has
// finished, then runs alone, issuing as much as it needs.
TEST(CommandLedger, OpLargerThanTheBoundRunsAlone) {
  CommandLedger l(10);
  op(l, kComm, 4);
  l.open(kCompute);
  EXPECT_FALSE(l.mayIssue(50));
  l.finish(kComm);
  EXPECT_TRUE(l.mayIssue(50));
  l.issue(50);
  EXPECT_TRUE(l.mayIssue(50)); // still nothing but its own
  l.issue(50);
  l.close();
  l.open(kComm);
  EXPECT_FALSE(l.mayIssue(1)); // the next one waits for it
  l.close();
  l.finish(kCompute);
  EXPECT_EQ(l.queued(), 0u);
}

TEST(CommandLedger, ClearStartsAStep) {
  CommandLedger l(10);
  op(l, kCompute, 9);
  l.open(kComm);
  l.clear();
  EXPECT_FALSE(l.isOpen());
  EXPECT_EQ(l.queued(), 0u);
  EXPECT_EQ(l.ops(), 0u);
  EXPECT_EQ(l.finished(), 0u);
  EXPECT_EQ(l.oldestUnfinished(kCompute), std::nullopt);
  EXPECT_THROW(l.issue(1), std::logic_error); // commands belong to an op
  l.open(kComm);
  EXPECT_THROW(l.open(kComm), std::logic_error);
}

// Which stream an op is timed and counted on (program.h): the transfers and
// the gradient collectives on the communication stream; tied_grad, whose
// sums and copies run on the compute stream (its all-reduce between them),
// on the compute stream, so that its end event follows all of its work.
TEST(CommunicationStream, TiedGradIsTimedOnTheComputeStream) {
  using pipesched::runtime::OpKind;
  using pipesched::runtime::runsOnCommunicationStream;
  for (OpKind k : {OpKind::Send, OpKind::Recv, OpKind::SendWeights, OpKind::FetchWeights,
                   OpKind::Group, OpKind::AllreduceGrad, OpKind::ReduceGrad})
    EXPECT_TRUE(runsOnCommunicationStream(k)) << pipesched::runtime::opName(k);
  for (OpKind k : {OpKind::Forward, OpKind::Backward, OpKind::BackwardWeight,
                   OpKind::ReleaseWeights, OpKind::OptimizerStep, OpKind::LossGrad,
                   OpKind::Jacobian, OpKind::Combine, OpKind::TiedGrad})
    EXPECT_FALSE(runsOnCommunicationStream(k)) << pipesched::runtime::opName(k);
}

} // namespace
