//===- DeadlockCheckTest.cpp - abstract execution of rank programs --------===//

#include "pipesched/Scheduling/DeadlockCheck.h"

#include <gtest/gtest.h>

using namespace pipesched::scheduling;

namespace {
ProgramStep local(uint32_t id) {
  ProgramStep s;
  s.id = id;
  return s;
}
CommOp op(bool isSend, int32_t peer, int64_t tag, uint32_t id,
          int64_t bytes = 8) {
  CommOp c;
  c.isSend = isSend;
  c.peer = peer;
  c.payload.tag = tag;
  c.payload.bytes = bytes;
  c.id = id;
  return c;
}
ProgramStep group(std::vector<CommOp> ops, uint32_t id) {
  ProgramStep s;
  s.kind = ProgramStep::Group;
  s.ops = std::move(ops);
  s.id = id;
  return s;
}
ProgramStep collective(std::vector<int32_t> members, int64_t stage,
                       uint32_t id) {
  ProgramStep s;
  s.kind = ProgramStep::Collective;
  s.members = std::move(members);
  s.payload.stage = stage;
  s.id = id;
  return s;
}
} // namespace

TEST(DeadlockCheck, EmptyAndLocalProgramsComplete) {
  EXPECT_EQ(checkDeadlockFree({}).status, DeadlockResult::Ok);
  EXPECT_EQ(checkDeadlockFree({{local(0), local(1)}, {}}).status,
            DeadlockResult::Ok);
}

TEST(DeadlockCheck, SendThenReceiveCompletes) {
  std::vector<RankProgram> ranks = {
      {local(0), group({op(true, 1, 0, 1)}, 1)},
      {group({op(false, 0, 0, 2)}, 2), local(3)}};
  EXPECT_EQ(checkDeadlockFree(ranks).status, DeadlockResult::Ok);
}

TEST(DeadlockCheck, CrossedUngroupedSendsDeadlockInACycle) {
  std::vector<RankProgram> ranks = {
      {group({op(true, 1, 0, 10)}, 10), group({op(false, 1, 1, 11)}, 11)},
      {group({op(true, 0, 1, 20)}, 20), group({op(false, 0, 0, 21)}, 21)}};
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Deadlock);
  EXPECT_TRUE(r.cycle);
  ASSERT_EQ(r.waits.size(), 2u);
  EXPECT_EQ(r.waits[0].opId, 10u);
  EXPECT_EQ(r.waits[0].waitsFor, 1);
  EXPECT_EQ(r.waits[1].opId, 20u);
  EXPECT_EQ(r.waits[1].waitsFor, 0);
}

TEST(DeadlockCheck, CrossedGroupedSendsComplete) {
  std::vector<RankProgram> ranks = {
      {group({op(true, 1, 0, 10), op(false, 1, 1, 11)}, 10)},
      {group({op(true, 0, 1, 20), op(false, 0, 0, 21)}, 20)}};
  EXPECT_EQ(checkDeadlockFree(ranks).status, DeadlockResult::Ok);
}

TEST(DeadlockCheck, MessagesMatchInOrderPerPair) {
  // Rank 1 receives tag 1 first, but the first send from rank 0 is tag 0.
  std::vector<RankProgram> ranks = {
      {group({op(true, 1, 0, 10)}, 10), group({op(true, 1, 1, 11)}, 11)},
      {group({op(false, 0, 1, 20)}, 20), group({op(false, 0, 0, 21)}, 21)}};
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Mismatch);
  EXPECT_EQ(r.first, 10u);
  EXPECT_EQ(r.second, 20u);
  EXPECT_EQ(r.field, "tag");
}

TEST(DeadlockCheck, BufferSizesMustAgree) {
  std::vector<RankProgram> ranks = {{group({op(true, 1, 0, 10, 64)}, 10)},
                                    {group({op(false, 0, 0, 20, 32)}, 20)}};
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Mismatch);
  EXPECT_EQ(r.field, "bytes");
}

TEST(DeadlockCheck, FinishedPeerIsReported) {
  std::vector<RankProgram> ranks = {{local(0)},
                                    {group({op(false, 0, 0, 20)}, 20)}};
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Deadlock);
  EXPECT_FALSE(r.cycle);
  ASSERT_EQ(r.waits.size(), 1u);
  EXPECT_EQ(r.waits[0].rank, 1);
  EXPECT_TRUE(r.waits[0].peerFinished);
}

TEST(DeadlockCheck, CollectivesCompleteWhenAllMembersArrive) {
  std::vector<RankProgram> ranks = {
      {collective({0, 1, 2}, 0, 1), collective({0, 2}, 1, 2)},
      {local(3), collective({0, 1, 2}, 0, 4)},
      {collective({0, 1, 2}, 0, 5), collective({0, 2}, 1, 6)}};
  EXPECT_EQ(checkDeadlockFree(ranks).status, DeadlockResult::Ok);
}

TEST(DeadlockCheck, CollectivesInInconsistentOrderDeadlock) {
  std::vector<RankProgram> ranks = {
      {collective({0, 1}, 0, 1), collective({0, 1}, 1, 2)},
      {collective({0, 1}, 1, 3), collective({0, 1}, 0, 4)}};
  // The first collective of each member meets the other's first: they
  // disagree on the stage.
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Mismatch);
  EXPECT_EQ(r.field, "stage");
}

TEST(DeadlockCheck, CollectiveWaitingOnPointToPointCycle) {
  std::vector<RankProgram> ranks = {
      {group({op(false, 1, 0, 10)}, 10), collective({0, 1}, 0, 11)},
      {collective({0, 1}, 0, 20), group({op(true, 0, 0, 21)}, 21)}};
  DeadlockResult r = checkDeadlockFree(ranks);
  ASSERT_EQ(r.status, DeadlockResult::Deadlock);
  EXPECT_TRUE(r.cycle);
}

TEST(DeadlockCheck, LongPipelineIsLinear) {
  // A 1F1B-shaped exchange over 64 ranks and 4096 messages per pair.
  const int32_t W = 64, M = 4096;
  std::vector<RankProgram> ranks(W);
  uint32_t id = 0;
  for (int32_t r = 0; r < W; ++r)
    for (int32_t m = 0; m < M; ++m) {
      std::vector<CommOp> ops;
      if (r > 0)
        ops.push_back(op(false, r - 1, m, id++));
      if (r + 1 < W)
        ops.push_back(op(true, r + 1, m, id++));
      ranks[r].push_back(group(ops, id++));
    }
  EXPECT_EQ(checkDeadlockFree(ranks).status, DeadlockResult::Ok);
}
