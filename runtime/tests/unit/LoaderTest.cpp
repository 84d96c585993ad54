// Loader and validator: each malformed program yields one precise message.
// The programs are the compiler's (tests/programs/*.json, regenerate.sh),
// broken one field at a time.
#include "program/loader.h"
#include "program/rank_image.h"
#include "program/validator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>

using namespace pipesched::runtime;
using json = nlohmann::json;

namespace {

std::string programPath(const std::string &name) {
  return std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name;
}

json program(const std::string &name) {
  std::ifstream in(programPath(name));
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

// The message of loading + validating `text` as "t.json" on `world` ranks,
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
std::string errorOf(const json &doc, int world = -1) { return errorOf(doc.dump(), world); }

// The index of the first op of rank `r` with this name, stage and microbatch.
size_t indexOf(const json &doc, int r, const std::string &op, int stage, int mb = -1) {
  const json &ops = doc["ranks"][r]["ops"];
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i]["op"] == op && ops[i].value("stage", -1) == stage &&
        ops[i].value("microbatch", -1) == mb)
      return i;
  ADD_FAILURE() << "no " << op << " (" << stage << ", " << mb << ") on rank " << r;
  return 0;
}

TEST(Loader, AcceptsTheTestPrograms) {
  for (const char *name :
       {"ddp-1.json", "ddp-2.json", "ddp-8.json", "gpipe-1.json", "gpipe-2.json",
        "gpipe-8.json", "1f1b-4.json", "1f1b-8.json", "fsdp-2.json", "interleaved-2.json",
        "zb-2.json", "independent-2.json", "dag-encoders-gpipe.json",
        "dag-encoders-1f1b.json", "dag-encoders-ddp.json", "dag-encoders-lpp.json",
        "dag-skip-1.json", "dag-skip-gpipe.json", "dag-skip-1f1b.json", "dag-skip-ddp.json",
        "dag-skip-lpp.json"})
    EXPECT_EQ(errorOf(program(name)), "") << name;
}

TEST(Loader, ReadsTheFields) {
  Program p = parseProgram(program("fsdp-2.json").dump(), "t.json", 2);
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.microbatches, 2);
  EXPECT_EQ(p.workers, 2);
  EXPECT_EQ(p.tensorCount(), 8);
  ASSERT_EQ(p.ranks[0].ops[0].kind, OpKind::Group);
  EXPECT_EQ(p.ranks[0].ops[0].count, 2u);
  const Op &fetch = p.ranks[0].childrenOf(p.ranks[0].ops[0])[0];
  EXPECT_EQ(describe(p, fetch), "fetch_weights (s=1) from rank 1");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(describe(p, p.ranks[0].ops[6]), "reduce_grad (s=1) onto rank 1 over [0, 1]");
  EXPECT_EQ(p.ranks[0].ops[6].bytes, 65536);
  EXPECT_TRUE(p.ranks[1].ownsStage(1));
  EXPECT_FALSE(p.ranks[1].ownsStage(0));
  // backward (s=1, b=0) reads its own output (stage 1 is the sink), then
  // its input; writes its input gradient.
  const Op &bwd = p.ranks[0].ops[4];
  ASSERT_EQ(bwd.kind, OpKind::Backward);
  EXPECT_EQ(std::vector<int64_t>(p.ranks[0].reads(bwd).begin(), p.ranks[0].reads(bwd).end()),
            (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(p.ranks[0].writes(bwd).size(), 1u);
  EXPECT_EQ(p.ranks[0].writes(bwd)[0], 5);
  ASSERT_EQ(p.graph.edges().size(), 1u);
  EXPECT_TRUE(p.graph.isSink(1));
}

TEST(Loader, SendsNameTheirTensorById) {
  Program p = parseProgram(program("gpipe-2.json").dump(), "t.json", 2);
  const Op &send = p.ranks[0].ops[1];
  EXPECT_EQ(send.tensor, 0);
  EXPECT_EQ(describe(p, send), "send act (s=0, b=0) to rank 1");
  const Op &recv = p.ranks[0].childrenOf(p.ranks[0].ops[3])[1];
  EXPECT_EQ(describe(p, recv), "recv grad (s=1, b=0) from rank 1");
  EXPECT_EQ(recv.stage, 1);
  EXPECT_EQ(recv.microbatch, 0);
}

TEST(Loader, MalformedJson) {
  std::string e = errorOf(std::string("{\"format\": \"pipesched-program\",\n \"version\": }"));
  EXPECT_EQ(e, "t.json: invalid JSON at line 2, column 13: syntax error while parsing "
               "value - unexpected '}'; expected '[', '{', or a literal (byte 45)");
}

// A deep document is refused before parsing, with its place: nothing
// recurses over it (dumping it for a message used to overflow the stack).
TEST(Loader, DeepJson) {
  std::string deep = "{\"a\": \"[[[\",\n \"b\": " + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_EQ(errorOf(deep), "t.json: JSON nested deeper than 16 levels at line 2, column 22 "
                           "(byte 35) (a program nests at most 8)");
  json d = program("gpipe-2.json");
  json nested = json::array();
  for (int i = 0; i < 12; ++i)
    nested = json::array({nested});
  d["stage_graph"] = json::array({nested});
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[0]: expected an edge [src, dst], got "
                        "array [[[[[[[[[[[[[]]]]]]]]]]]]]");
}

TEST(Loader, FormatAndVersion) {
  json d = program("gpipe-2.json");
  d["format"] = "other";
  EXPECT_EQ(errorOf(d), "t.json: format: expected \"pipesched-program\", got \"other\"");
  d = program("gpipe-2.json");
  d["version"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: version: this file is format version 1; this pipeline-run "
                        "reads version 2 (recompile it with pipeline-compile)");
  d["version"] = 3;
  EXPECT_EQ(errorOf(d), "t.json: version: this file is format version 3; this pipeline-run "
                        "reads version 2 (it needs a newer pipeline-run)");
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
  d["ranks"][0]["ops"][0].erase("writes");
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0]: missing field 'writes'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["stage"] = "0";
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].stage: expected an integer, got string \"0\"");
  d = program("gpipe-2.json");
  d["split_backward"] = 0;
  EXPECT_EQ(errorOf(d), "t.json: split_backward: expected a boolean, got number 0");
  d = program("gpipe-2.json");
  d["cost"]["fwd"] = {1, 1, 1};
  EXPECT_EQ(errorOf(d), "t.json: cost.fwd: lists 3 durations for 2 stages");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["reads"] = 0;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].reads: expected an array, got number 0");
}

TEST(Loader, CostTickAndTransferAreOptional) {
  json d = program("gpipe-2.json");
  Program p = parseProgram(d.dump(), "t.json", 2);
  EXPECT_EQ(p.cost.tickNs, 0);
  EXPECT_EQ(p.cost.transfer, 0);
  d["cost"]["tick_ns"] = 41200;
  d["cost"]["transfer"] = 3;
  p = parseProgram(d.dump(), "t.json", 2);
  EXPECT_EQ(p.cost.tickNs, 41200);
  EXPECT_EQ(p.cost.transfer, 3);
  d["cost"]["tick_ns"] = -1;
  EXPECT_EQ(errorOf(d), "t.json: cost.tick_ns: -1 must be at least 0");
  d["cost"]["tick_ns"] = 1.5;
  EXPECT_EQ(errorOf(d), "t.json: cost.tick_ns: expected an integer, got number 1.5");
  d["cost"]["tick_ns"] = 0;
  d["cost"]["transfer"] = "2";
  EXPECT_EQ(errorOf(d), "t.json: cost.transfer: expected an integer, got string \"2\"");
  d["cost"]["transfer"] = uint64_t(1) << 63;
  EXPECT_EQ(errorOf(d), "t.json: cost.transfer: 9223372036854775808 is too large");
  d["cost"]["transfer"] = -7;
  EXPECT_EQ(errorOf(d), "t.json: cost.transfer: -7 must be at least 0");
  d["cost"].erase("transfer");
  d["cost"]["latency"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: cost: unknown field 'latency'");
}

TEST(Loader, LayersPerStageAreOptional) {
  // A partition (docs/partition.md): one layer count per stage.
  json d = program("gpipe-2.json");
  EXPECT_TRUE(parseProgram(d.dump(), "t.json", 2).layers.empty());
  d["layers"] = {3, 1};
  EXPECT_EQ(parseProgram(d.dump(), "t.json", 2).layers, (std::vector<int64_t>{3, 1}));
  d["layers"] = {3};
  EXPECT_EQ(errorOf(d), "t.json: layers: lists 1 layer counts for 2 stages");
  d["layers"] = {3, 0};
  EXPECT_EQ(errorOf(d), "t.json: layers[1]: 0 is out of range [1, 65537)");
  d["layers"] = {65537, 1};
  EXPECT_EQ(errorOf(d), "t.json: layers[0]: 65537 is out of range [1, 65537)");
  d["layers"] = {1.5, 1};
  EXPECT_EQ(errorOf(d), "t.json: layers[0]: expected an integer, got number 1.5");
  d["layers"] = 2;
  EXPECT_EQ(errorOf(d), "t.json: layers: expected an array, got number 2");
}

TEST(Loader, UnknownOpsFieldsAndKinds) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["op"] = "forwrd";
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].op: unknown op 'forwrd'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["foo"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0]: unknown field 'foo' for op 'forward'");
  // Version 1's fields: a send named its tensor by kind, stage, microbatch.
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["kind"] = "act";
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[1]: unknown field 'kind' for op 'send'");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["writes"] = {0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[1]: unknown field 'writes' for op 'send'");
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

TEST(Loader, StageGraphEdges) {
  json d = program("gpipe-2.json");
  d["stage_graph"] = {{1, 0}};
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[0]: edge [1, 0] must go from a lower to a "
                        "higher stage (src < dst)");
  d["stage_graph"] = {{0, 1}, {0, 1}};
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[1]: edge [0, 1] is listed twice (first at "
                        "stage_graph[0])");
  d["stage_graph"] = {{0, 2}};
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[0][1]: 2 is out of range [0, 2)");
  d["stage_graph"] = {{0, 1, 2}};
  EXPECT_EQ(errorOf(d), "t.json: stage_graph[0]: expected an edge [src, dst], got array "
                        "[0,1,2]");
}

// An empty stage graph means independent stages, never the chain: a chain
// program under `[]` reads what its graph does not give.
TEST(Loader, EmptyStageGraphIsNotTheChain) {
  json d = program("gpipe-2.json");
  d["stage_graph"] = json::array();
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[4].reads: backward (s=0, b=0) reads [5], "
                        "expected [0] (its own output, from which the loss gradient is "
                        "computed, on microbatch 0)");
  Program p = parseProgram(program("independent-2.json").dump(), "t.json", 2);
  EXPECT_TRUE(p.graph.edges().empty());
  EXPECT_EQ(p.graph.sinks(), 2);
}

// Compute ops list exactly the tensors of their roles in the stage graph.
TEST(Loader, ComputeReadsAndWritesFollowTheGraph) {
  json d = program("dag-encoders-gpipe.json");
  size_t fwd = indexOf(d, 2, "forward", 2, 0);
  d["ranks"][2]["ops"][fwd]["reads"] = {4};
  EXPECT_EQ(errorOf(d), "t.json: ranks[2].ops[" + std::to_string(fwd) +
                            "].reads: forward (s=2, b=0) reads [4], expected [0, 8] (the "
                            "outputs of stages 0, 1 on microbatch 0)");
  d = program("dag-encoders-gpipe.json");
  d["ranks"][2]["ops"][fwd]["reads"] = {8, 0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[2].ops[" + std::to_string(fwd) +
                            "].reads: forward (s=2, b=0) reads [8, 0], expected [0, 8] (the "
                            "outputs of stages 0, 1 on microbatch 0)");
  d = program("dag-encoders-gpipe.json");
  d["ranks"][2]["ops"][fwd]["writes"] = json::array();
  EXPECT_EQ(errorOf(d), "t.json: ranks[2].ops[" + std::to_string(fwd) +
                            "].writes: forward (s=2, b=0) writes [], expected [16] (its "
                            "output)");
  d = program("dag-encoders-gpipe.json");
  size_t bwd = indexOf(d, 2, "backward", 2, 0);
  d["ranks"][2]["ops"][bwd]["reads"] = {16, 0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[2].ops[" + std::to_string(bwd) +
                            "].reads: backward (s=2, b=0) reads [16, 0], expected [16, 0, 8] "
                            "(its own output, from which the loss gradient is computed, "
                            "then the outputs of stages 0, 1, on microbatch 0)");
  d = program("dag-encoders-gpipe.json");
  size_t leg = indexOf(d, 0, "backward", 0, 0);
  d["ranks"][0]["ops"][leg]["writes"] = {1};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[" + std::to_string(leg) +
                            "].writes: backward (s=0, b=0) writes [1], expected [] (stage 0 "
                            "has no predecessor: there is no input gradient to write)");
  // A fan-out stage's backward reads its successors' input gradients.
  d = program("dag-skip-gpipe.json");
  size_t fan = indexOf(d, 1, "backward", 1, 2);
  d["ranks"][1]["ops"][fan]["reads"] = {21, 10};
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[" + std::to_string(fan) +
                            "].reads: backward (s=1, b=2) reads [21, 10], expected [21, 37, "
                            "4] (the input gradients of stages 2, 4, then the output of "
                            "stage 0, on microbatch 2)");
}

TEST(Loader, TensorIds) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][0]["writes"] = {8};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[0].writes[0]: 8 is out of range [0, 8)");
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["reads"] = {0, 2};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[1].reads: lists 2 tensors; a send or receive "
                        "moves exactly one");
  d = program("gpipe-2.json");
  d["ranks"][1]["ops"][0]["writes"] = json::array();
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0].writes: lists 0 tensors; a send or receive "
                        "moves exactly one");
}

TEST(Loader, BackwardWeightNeedsSplit) {
  json d = program("zb-2.json");
  d["split_backward"] = false;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[5]: backward_weight needs \"split_backward\": "
                        "true (or a scanned backward's \"scan_tensors\")");
}

// stages x microbatches is bounded by the compute ops in the file before
// anything of that size is allocated.
TEST(Loader, HugeShapeRefusedAtOnce) {
  json d = program("gpipe-2.json");
  d["stages"] = 2147483646;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(errorOf(d), "t.json: 2147483646 stages x 2 microbatches make 4294967292 jobs "
                        "per direction, but the file has 8 compute ops (every forward and "
                        "backward runs exactly once)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(Loader, Files) {
  try {
    loadProgram(PIPESCHED_TEST_PROGRAMS, 2);
    FAIL();
  } catch (const ProgramError &e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(PIPESCHED_TEST_PROGRAMS) +
                  ": is a directory without index.json or index.cbor, not a per-rank "
                  "program");
  }
  try {
    loadProgram(programPath("missing.json"), 2);
    FAIL();
  } catch (const ProgramError &e) {
    EXPECT_EQ(std::string(e.what()),
              programPath("missing.json") + ": cannot open: No such file or directory");
  }
  EXPECT_EQ(loadProgram(programPath("gpipe-2.json"), 2).stages, 2);
}

TEST(Validator, SendAndReceiveMustMatch) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["ops"][0]["tag"] = 7;
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[0].ops[1]: send act (s=0, b=0) to rank 1 (tag 0, 4096 bytes) "
            "does not match the 1st receive from rank 0 on rank 1, ranks[1].ops[0]: "
            "recv act (s=0, b=0) from rank 0 (tag 7, 4096 bytes) (the tags differ)");
  d = program("gpipe-2.json");
  d["ranks"][1]["ops"][2]["bytes"] = 1;
  EXPECT_EQ(errorOf(d),
            "t.json: ranks[0].ops[3].ops[0]: send act (s=0, b=1) to rank 1 (tag 1, 4096 "
            "bytes) does not match the 2nd receive from rank 0 on rank 1, ranks[1].ops[2]: "
            "recv act (s=0, b=1) from rank 0 (tag 1, 1 bytes) (the sizes differ)");
}

TEST(Validator, UnmatchedSend) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"].push_back(
      {{"op", "send"}, {"reads", {0}}, {"peer", 1}, {"tag", 99}, {"bytes", 4096}});
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[8]: send act (s=0, b=0) to rank 1 has no "
                        "matching receive: rank 1 ends without posting it (rank 0 sends 3 "
                        "messages to rank 1, which receives 2)");
}

// Every message matches, yet each rank first waits for the other.
TEST(Validator, Deadlock) {
  EXPECT_EQ(errorOf(program("deadlock-2.json")),
            "t.json: the rank programs deadlock: rank 0 waits in ranks[0].ops[0] "
            "(fetch_weights (s=1) from rank 1) for rank 1, rank 1 waits in ranks[1].ops[0] "
            "(fetch_weights (s=0) from rank 0) for rank 0 (a cycle)");
  // Rank 0 waits for a gradient before sending the activation it needs.
  json d = program("gpipe-2.json");
  json group = d["ranks"][0]["ops"][3]["ops"];
  d["ranks"][0]["ops"][3] = group[1];
  d["ranks"][0]["ops"].insert(d["ranks"][0]["ops"].begin() + 4, group[0]);
  EXPECT_EQ(errorOf(d), "t.json: the rank programs deadlock: rank 0 waits in "
                        "ranks[0].ops[3] (recv grad (s=1, b=0) from rank 1) for rank 1, rank "
                        "1 waits in ranks[1].ops[2] (recv act (s=0, b=1) from rank 0) for "
                        "rank 0 (a cycle)");
}

TEST(Validator, DuplicateTag) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"][1]["tag"] = 1;
  d["ranks"][1]["ops"][0]["tag"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[3].ops[0]: send act (s=0, b=1) to rank 1 "
                        "reuses tag 1 of ranks[0].ops[1] (tags are unique per message in "
                        "a step)");
}

TEST(Validator, TagFitsTheTransport) {
  Program p = parseProgram(program("gpipe-2.json").dump(), "t.json", 2);
  try {
    validate(p, ValidateOptions{2});
    FAIL();
  } catch (const ProgramError &e) {
    EXPECT_EQ(std::string(e.what()), "t.json: ranks[1].ops[7]: tag 3 exceeds the "
                                     "transport's largest tag 2");
  }
}

TEST(Validator, DataMustBeThere) {
  json d = program("gpipe-2.json");
  d["ranks"][1]["ops"].erase(0); // the first receive
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0]: forward (s=1, b=0) needs act (s=0, b=0), "
                        "which no earlier op of rank 1 computes or receives");
  // A group's receives land after the group: a send in it cannot pass one on.
  d = program("gpipe-2.json");
  d["ranks"][0]["ops"][3]["ops"][0]["reads"] = {5};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[3].ops[0]: send grad (s=1, b=0) to rank 1 "
                        "needs grad (s=1, b=0), which no earlier op of rank 0 computes or "
                        "receives");
}

TEST(Validator, WeightsMustBeThere) {
  json d = program("fsdp-2.json");
  d["ranks"][0]["ops"].erase(0); // the group that fetches stage 1
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[1]: forward (s=1, b=0) needs stage 1's "
                        "weights, which rank 0 neither owns nor fetched");
  d = program("fsdp-2.json");
  d["ranks"][0]["ops"][5]["stage"] = 0;
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[5]: releases stage 0's weights, which rank 0 "
                        "has not fetched");
}

TEST(Validator, EveryJobOnce) {
  json d = program("gpipe-2.json");
  d["ranks"][0]["ops"].erase(6); // backward (s=0, b=1)
  EXPECT_EQ(errorOf(d), "t.json: backward (s=0, b=1) runs on no rank");
  d = program("ddp-2.json");
  d["ranks"][1]["ops"][0]["microbatch"] = 0; // forward (s=0, b=1) becomes b=0
  d["ranks"][1]["ops"][0]["writes"] = {0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[0]: forward (s=0, b=0) runs twice (first at "
                        "ranks[0].ops[0])");
}

TEST(Validator, CollectivesAgree) {
  json d = program("ddp-2.json");
  d["ranks"][1]["ops"][7]["members"] = {0};
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[7].members: [0] does not contain the calling "
                        "rank 1");
  // Rank 1 reduces stage 0 first, rank 0 stage 1.
  d = program("ddp-2.json");
  json ops = d["ranks"][1]["ops"];
  d["ranks"][1]["ops"] = {ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6],
                          ops[9], ops[10], ops[11], ops[7], ops[8]};
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[8]: allreduce_grad (s=0) over [0, 1] does not "
                        "match rank 0's 1st collective on these members, ranks[0].ops[7]: "
                        "allreduce_grad (s=1) over [0, 1] (the stages differ)");
  d = program("ddp-2.json");
  d["ranks"][1]["ops"][7]["bytes"] = 1;
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[7]: allreduce_grad (s=1) over [0, 1] does not "
                        "match rank 0's 1st collective on these members, ranks[0].ops[7]: "
                        "allreduce_grad (s=1) over [0, 1] (the sizes differ)");
  // Stage 0 has one owner: rank 1 may all-reduce it, but not while rank 0
  // reduces it.
  d = program("fsdp-2.json");
  d["ranks"][1]["ops"][10]["op"] = "allreduce_grad";
  d["ranks"][1]["ops"][10].erase("root");
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[10]: allreduce_grad (s=0) over [0, 1] does not "
                        "match rank 0's 2nd collective on these members, ranks[0].ops[8]: "
                        "reduce_grad (s=0) onto rank 0 over [0, 1] (the kinds differ)");
  // A weight gradient added after the collective that summed the stage's.
  d = program("ddp-2.json");
  std::swap(d["ranks"][1]["ops"][9], d["ranks"][1]["ops"][10]);
  EXPECT_EQ(errorOf(d), "t.json: ranks[1].ops[10]: backward (s=0, b=3) adds to stage 0's "
                        "weight gradient after rank 1's last collective on it "
                        "(ranks[1].ops[9]): its contribution would be lost");
}

TEST(Validator, CollectiveWithoutCounterpart) {
  json d = program("ddp-2.json");
  json &ops = d["ranks"][0]["ops"];
  ops.insert(ops.begin() + 11, ops[10]); // rank 0 reduces stage 0 twice
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[11]: allreduce_grad (s=0) over [0, 1] has no "
                        "counterpart: rank 1 ends without calling it");
}

// Every owner of a stage steps with the same gradient: an all-reduce of it
// includes every owner, a reduce's root is its only owner, and every owner
// of a replicated stage all-reduces it.
TEST(Validator, ReplicasStepAlike) {
  json d = program("ddp-2.json");
  d["ranks"][0]["ops"][7]["members"] = {0};
  d["ranks"][1]["ops"][7]["members"] = {1};
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[7]: allreduce_grad (s=1) over [0]: the members must "
                        "include every owner of stage 1, [0, 1] (an owner left out would "
                        "step with another gradient than the others)");
  d = program("ddp-2.json");
  for (int r = 0; r < 2; ++r) {
    d["ranks"][r]["ops"][10]["op"] = "reduce_grad";
    d["ranks"][r]["ops"][10]["root"] = 0;
  }
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[10]: reduce_grad (s=0) onto rank 0 over [0, 1]: "
                        "stage 0 has 2 owners, [0, 1], and a reduce gives the summed "
                        "gradient to its root alone: the other owners would step without "
                        "it (reduce a replicated stage with allreduce_grad over its owners)");
  d = program("ddp-2.json");
  for (int r = 0; r < 2; ++r)
    d["ranks"][r]["ops"].erase(10);
  EXPECT_EQ(errorOf(d), "t.json: ranks[0]: rank 0 owns stage 0 with the ranks [0, 1] but reduces "
                        "no gradient of it: its replica would step with its own gradient "
                        "alone (an allreduce_grad over the owners keeps the replicas equal)");
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

// Every owner applies its optimizer exactly once, after all the gradient it
// should apply (../shared/bad-inputs: no-optstep, optstep-early, optstep-twice).
TEST(Validator, OptimizerSteps) {
  EXPECT_EQ(errorOf(program("invalid/no-optstep.json")),
            "t.json: ranks[0]: rank 0 owns stage 0 but runs no optimizer_step (s=0): every "
            "owner applies the stage's gradient once per step");
  EXPECT_EQ(errorOf(program("invalid/optstep-early.json")),
            "t.json: ranks[0].ops[0]: optimizer_step (s=0) comes before backward (s=0, b=0) "
            "at ranks[0].ops[5], whose weight gradient it would miss");
  EXPECT_EQ(errorOf(program("invalid/optstep-twice.json")),
            "t.json: ranks[0].ops[8]: optimizer_step (s=0) runs twice on rank 0 (first at "
            "ranks[0].ops[7])");
  // Before the collective that sums the gradient.
  json d = program("ddp-2.json");
  std::swap(d["ranks"][0]["ops"][7], d["ranks"][0]["ops"][8]);
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[7]: optimizer_step (s=1) comes before "
                        "allreduce_grad (s=1) over [0, 1] at ranks[0].ops[8], whose summed "
                        "gradient it would miss");
  // With the split backward, backward_weight carries the weight gradient.
  d = program("zb-2.json");
  json step = d["ranks"][0]["ops"].back();
  ASSERT_EQ(step["op"], "optimizer_step");
  d["ranks"][0]["ops"].erase(d["ranks"][0]["ops"].size() - 1);
  size_t last = indexOf(d, 0, "backward_weight", 0, 3);
  d["ranks"][0]["ops"].insert(d["ranks"][0]["ops"].begin() + long(last), step);
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[" + std::to_string(last) +
                            "]: optimizer_step (s=0) comes before backward_weight (s=0, b=3) "
                            "at ranks[0].ops[" + std::to_string(last + 1) +
                            "], whose weight gradient it would miss");
  // A non-owner's weight gradient must be reduced onto an owner.
  d = program("fsdp-2.json");
  d["ranks"][0]["ops"].erase(6); // rank 0's reduce_grad of stage 1
  d["ranks"][1]["ops"].erase(6); // and rank 1's
  EXPECT_EQ(errorOf(d), "t.json: ranks[0].ops[4]: backward (s=1, b=0) computes stage 1's "
                        "weight gradient on rank 0, which neither owns stage 1 nor reduces "
                        "its gradient in a collective: its contribution would be lost");
}

// A run of a per-rank program sends rank 0 each rank's loaded ops: the
// image round-trips, and a malformed one is refused before the validator
// indexes with anything in it.
TEST(RankImage, RoundTripsAndRefusesMalformed) {
  const Program whole = loadProgram(programPath("fsdp-2.json"), -1);
  Program gathered = whole;
  for (RankProgram &rp : gathered.ranks) {
    rp.ops.clear();
    rp.children.clear();
    rp.tensorIds.clear();
  }
  for (int r = 0; r < whole.workers; ++r)
    unpackRankImage(packRankImage(whole.ranks[size_t(r)]), r, gathered);
  EXPECT_NO_THROW(validate(gathered));
  for (int r = 0; r < whole.workers; ++r) {
    const RankProgram &a = whole.ranks[size_t(r)], &b = gathered.ranks[size_t(r)];
    ASSERT_EQ(a.ops.size(), b.ops.size());
    EXPECT_EQ(a.children.size(), b.children.size());
    EXPECT_EQ(a.tensorIds, b.tensorIds);
    for (size_t i = 0; i < a.ops.size(); ++i)
      EXPECT_EQ(describe(whole, a, a.ops[i]), describe(gathered, b, b.ops[i]));
  }
  const std::string image = packRankImage(whole.ranks[1]);
  auto errorOfImage = [&](const std::string &bytes) {
    try {
      unpackRankImage(bytes, 1, gathered);
    } catch (const ProgramError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string prefix = programPath("fsdp-2.json") + ": rank 1's ops, as rank 0 "
                                                          "received them, are malformed (";
  const std::string suffix = "): is every rank running the same pipeline-run?";
  EXPECT_EQ(errorOfImage(image.substr(0, image.size() - 1)),
            prefix + "another layout or size" + suffix);
  EXPECT_EQ(errorOfImage("x"), prefix + "truncated" + suffix);
  RankProgram bad = whole.ranks[1];
  for (Op &op : bad.ops)
    if (isCollective(op.kind))
      op.group = 7;
  EXPECT_EQ(errorOfImage(packRankImage(bad)), prefix + "a collective group out of range" + suffix);
  bad = whole.ranks[1];
  bad.tensorIds[0] = -1;
  EXPECT_EQ(errorOfImage(packRankImage(bad)), prefix + "a tensor id out of range" + suffix);
  EXPECT_TRUE(gathered.ranks[1].ops.empty()); // nothing malformed stays
}

} // namespace
