// Loader and validator: each malformed program yields one precise message.
#include "loader.h"
#include "validator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace pipesched::runtime;
using json = nlohmann::json;

namespace {

json program(const std::string &name) {
  std::ifstream in(std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name);
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

// The message of loading + validating `doc` as "t.json" on `world` ranks,
// or "" when the program is accepted.
std::string errorOf(const std::string &text, int world = -1) {
  try {
    Program p = parseProgram(text, "t.json", world);
    validate(p);
  } catch (const ProgramError &e) {
    return e.what();
  }
  return "";
}
std::string errorOf(const json &doc, int world = -1) {
  return errorOf(doc.dump(), world);
}

TEST(Loader, AcceptsTheTestPrograms) {
  for (const char *name : {"ddp-1.json", "gpipe-2.json", "ddp-2.json", "fsdp-2.json",
                           "zb-2.json", "interleaved-2.json", "1f1b-4.json"})
    EXPECT_EQ(errorOf(program(name)), "") << name;
}

TEST(Loader, ReadsTheFields) {
  Program p = parseProgram(program("fsdp-2.json").dump(), "t.json", 2);
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.microbatches, 2);
  EXPECT_EQ(p.workers, 2);
  ASSERT_EQ(p.ranks[0].ops[1].kind, OpKind::Group);
  EXPECT_EQ(p.ranks[0].ops[1].numChildren, 2u);
  const Op &fetch = p.ranks[0].childrenOf(p.ranks[0].ops[1])[1];
  EXPECT_EQ(describe(p, fetch), "fetch_weights (s=1) from rank 1");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(describe(p, p.ranks[0].ops[7]), "reduce_grad (s=0) onto rank 0 over [0, 1]");
  EXPECT_TRUE(p.ranks[1].ownsStage(1));
  EXPECT_FALSE(p.ranks[1].ownsStage(0));
}

TEST(Loader, MalformedJson) {
  std::string e = errorOf(std::string("{\"format\": \"pipesched-program\",\n \"version\": }"));
  EXPECT_EQ(e, "t.json: invalid JSON at line 2, column 13: syntax error while parsing "
               "value - unexpected '}'; expected '[', '{', or a literal (byte 45)");
}

TEST(Loader, FormatAndVersion) {
  json d = program("gpipe-2.json");
  d["format"] = "other";
  EXPECT_EQ(errorOf(d), "t.json: format: expected \"pipesched-program\", got \"other\"");
  d = program("gpipe-2.json");
  d["version"] = 2;
  EXPECT_EQ(errorOf(d), "t.json: version: unsupported version 2 (this runtime reads version 1)");
}

TEST(Loader, WorldSize) {
  EXPECT_EQ(errorOf(program("gpipe-2.json"), 3),
            "t.json: the program is for 2 ranks, launched with 3");
  EXPECT_EQ(errorOf(program("gpipe-2.json"), 2), "");
}

TEST(Loader, PeerOutOfRange) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["ops"][0]["peer"] = 5;
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0].peer: 5 is out of range [0, 2)");
}

TEST(Loader, MissingAndMistypedFields) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0].erase("microbatch");
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0]: missing field 'microbatch'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["stage"] = "0";
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].stage: expected an integer, got string \"0\"");
  d = program("gpipe-2.json");
  d["split_backward"] = 0;
  EXPECT_EQ(errorOf(d), "t.json: split_backward: expected a boolean, got number 0");
  d = program("gpipe-2.json");
  d["cost"]["fwd"] = {1, 1, 1};
  EXPECT_EQ(errorOf(d), "t.json: cost.fwd: lists 3 durations for 2 stages");
}

TEST(Loader, UnknownOpsFieldsAndKinds) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["op"] = "forwrd";
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].op: unknown op 'forwrd'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["foo"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0]: unknown field 'foo' for op 'forward'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["kind"] = "activation";
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[0].ops[1].kind: unknown kind 'activation' (expected 'act' or 'grad')");
  d = program("gpipe-2.json");
  d["extra"] = true;
  EXPECT_EQ(errorOf(d), "t.json: unknown field 'extra' at the top level");
}

TEST(Loader, RanksInOrder) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["rank"] = 0;
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[1].rank: expected 1, got 0 (ranks must be listed in order)");
  d = program("gpipe-2.json");
  d["ranks"].erase(1);
  EXPECT_EQ(errorOf(d), "t.json: ranks: has 1 entries, expected one per worker (2)");
}

TEST(Loader, GroupsHoldTransfersOnly) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][3]["ops"].push_back({{"op", "group"}, {"ops", json::array()}});
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[3].ops[2]: 'group' cannot appear in a group "
                        "(only send, recv, send_weights and fetch_weights can)");
}

TEST(Loader, StageGraphMustBeTheChain) {
  json d = program("gpipe-2.json");
  d["stage_graph"] = {{0, 1}};
  EXPECT_EQ(errorOf(d), "");
  d["stage_graph"] = {{1, 0}};
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[0]: pipeline-run supports only chain stage "
                        "graphs (0 -> 1 -> ... -> S-1); edge [1, 0] is not part of the chain");
}

TEST(Loader, BackwardWeightNeedsSplit) {
  json d = program("zb-2.json");
  d["split_backward"] = false;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[8]: backward_weight needs \"split_backward\": true");
}

TEST(Validator, SendAndReceiveMustMatch) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["ops"][0]["tag"] = 7;
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[0].ops[1]: send act (s=0, b=0) to rank 1 (tag 0, 4096 bytes) "
            "does not match the 1st receive from rank 0 on rank 1, ranks[1].ops[0]: "
            "recv act (s=0, b=0) from rank 0 (tag 7, 4096 bytes)");
  d = program("gpipe-2.json");
  d["ranks"][1]["ops"][2]["bytes"] = 1;
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[0].ops[3].ops[0]: send act (s=0, b=1) to rank 1 (tag 1, 4096 "
            "bytes) does not match the 2nd receive from rank 0 on rank 1, ranks[1].ops[2]: "
            "recv act (s=0, b=1) from rank 0 (tag 1, 1 bytes)");
}

TEST(Validator, UnmatchedSend) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"].push_back({{"op", "send"}, {"kind", "act"}, {"stage", 0},
                                  {"microbatch", 0}, {"peer", 1}, {"tag", 99},
                                  {"bytes", 4096}});
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[8]: send act (s=0, b=0) to rank 1 has no "
                        "matching receive: rank 0 sends 3 messages to rank 1, which "
                        "receives 2");
}

TEST(Validator, DuplicateTag) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["tag"] = 1;
  d["ranks"][1]["ops"][0]["tag"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[3].ops[0]: send act (s=0, b=1) to rank 1 "
                        "reuses tag 1 of ranks[0].ops[1] (tags are unique per message in "
                        "a step)");
}

TEST(Validator, DataMustBeThere) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["ops"].erase(0); // the first receive
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0]: forward (s=1, b=0) needs act (s=0, b=0), "
                        "which no earlier op of rank 1 computes or receives");
}

TEST(Validator, WeightsMustBeThere) {
  json d = program("fsdp-2.json");
  d["ranks"][0]["ops"].erase(1); // the group that fetches stage 1
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[1]: forward (s=1, b=0) needs stage 1's "
                        "weights, which rank 0 neither owns nor fetched");
  d = program("fsdp-2.json");
  d["ranks"][0]["ops"][4] = {{"op", "release_weights"}, {"stage", 0}};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[4]: releases stage 0's weights, which rank 0 "
                        "has not fetched");
}

TEST(Validator, EveryJobOnce) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"].erase(6); // backward (s=0, b=1)
  EXPECT_EQ(errorOf(d), "t.json: backward (s=0, b=1) runs on no rank");
  d = program("ddp-2.json");
  d["ranks"][1]["ops"][0]["microbatch"] = 0;
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0]: forward (s=0, b=0) runs twice (first at "
                        "ranks[0].ops[0])");
}

TEST(Validator, CollectivesAgree) {
  json d = program("ddp-2.json");
  d["ranks"][1]["ops"][8]["group"] = {0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[8].group: [0] does not contain the calling "
                        "rank 1");
  d = program("ddp-2.json");
  std::swap(d["ranks"][1]["ops"][8], d["ranks"][1]["ops"][9]);
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[8]: allreduce_grad (s=0) over [0, 1] does not "
                        "match rank 0's 1st collective on this group, ranks[0].ops[8]: "
                        "allreduce_grad (s=1) over [0, 1]");
  d = program("ddp-2.json");
  d["ranks"][1]["ops"].erase(9);
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[9]: allreduce_grad (s=0) over [0, 1] has no "
                        "counterpart on rank 1 (rank 0 calls 2 collectives on [0, 1], rank 1 "
                        "calls 1)");
}

TEST(Validator, OwnersOnly) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][7]["stage"] = 1;
  d["ranks"][1]["ops"].push_back({{"op", "optimizer_step"}, {"stage", 0}});
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[7]: optimizer_step (s=1): rank 0 does not own "
                        "stage 1");
  d = program("gpipe-2.json");
  d["ranks"][0]["owns"] = {0, 0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].owns[1]: stage 0 is listed twice");
  d = program("gpipe-2.json");
  d["ranks"][1]["owns"] = json::array();
  EXPECT_EQ(errorOf(d), "t.json: ranks: stage 1 has no owner (no ranks[i].owns lists it)");
}

} // namespace
