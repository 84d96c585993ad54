// The rule table of the runtime's validator (validator.cpp) and of its
// matching (matching.cpp): each rule, named in the source by a
// "// rule: NAME" line above its check, has a row here with a compiler-made
// program (tests/programs) broken so that it fails that rule alone, on every
// rank where the rule is per rank, and the exact message. A rule that no
// program can reach says why instead. RulesHaveRows fails when the source
// and this table disagree: a check without a name, a rule without a row, a
// row naming no rule.
#include "program/loader.h"
#include "program/validator.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>

using namespace pipesched::runtime;
using json = nlohmann::json;

namespace {

json program(const std::string &name) {
  std::ifstream in(std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name);
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

json &ops(json &d, int r) { return d["ranks"][r]["ops"]; }
void erase(json &d, int r, int i) { ops(d, r).erase(size_t(i)); }
// Moves op `from` of rank `r` so that it ends at index `to`.
void move(json &d, int r, int from, int to) {
  json op = ops(d, r)[size_t(from)];
  erase(d, r, from);
  ops(d, r).insert(ops(d, r).begin() + to, op);
}
void duplicate(json &d, int r, int i) {
  ops(d, r).insert(ops(d, r).begin() + i, ops(d, r)[size_t(i)]);
}

struct Row {
  const char *rule;
  const char *program;
  std::function<void(json &)> breakIt;
  std::string message; // after "t.json: "
  // A per-rank rule: validateRank() of this rank says the same.
  int rank = -1;
  std::function<void(Program &)> breakLoaded = nullptr; // after loading
  ValidateOptions options = {};
};

// Rules no program reaches, and why; each still has its check (a
// [[noreturn]] path the compiler needs, or a second line of defence).
const std::map<std::string, std::string> kUnreachable = {
    {"deadlock-chain",
     "a deadlock without a cycle ends its waits at a finished rank, which "
     "collective-counterpart or transfer-counterpart names first"},
};

std::vector<Row> rows() {
  return {
      // --- every job once (checkJobs) -------------------------------------
      {"job-once", "gpipe-2.json", [](json &d) { duplicate(d, 0, 0); },
       "ranks[0].ops[1]: forward (s=0, b=0) runs twice (first at "
       "ranks[0].ops[0])"},
      {"job-runs", "gpipe-2.json", [](json &d) { erase(d, 1, 6); },
       "backward (s=1, b=1) runs on no rank"},
      // --- a scanned backward (checkScan) ---------------------------------
      {"scan-replaces-backward", "bppsa-3.json",
       [](json &d) {
         ops(d, 0)[2]["op"] = "backward";
         ops(d, 0)[2]["reads"] = json::array({3});
       },
       "ranks[0].ops[2]: backward (s=0, b=0) cannot run in a scanned backward "
       "(the scan replaces every backward)"},
      {"scan-chain", "bppsa-3.json",
       [](json &d) {
         d["stage_graph"] = json::parse("[[0, 1], [0, 2], [1, 2]]");
         for (int i : {1, 3}) // forward and jacobian (s=2)
           ops(d, 2)[i]["reads"] = json::array({0, 2});
         ops(d, 2)[6]["reads"] = json::array({9, 0, 2}); // its backward_weight
       },
       "a scanned backward needs the chain of stages 0 -> 1 -> ... -> 2; stage "
       "2 differs"},
      {"scan-loss-at-sink", "bppsa-3.json",
       [](json &d) {
         ops(d, 2)[2]["stage"] = 1;
         ops(d, 2)[2]["reads"] = json::array({2});
       },
       "ranks[2].ops[2]: loss_grad (s=1, b=0): the loss gradient is taken at "
       "the last stage"},
      {"scan-no-first-jacobian", "bppsa-3.json",
       [](json &d) {
         ops(d, 1)[3]["stage"] = 0;
         ops(d, 1)[3]["reads"] = json::array();
       },
       "ranks[1].ops[3]: jacobian (s=0, b=0): stage 0's Jacobian is never "
       "scanned"},
      {"scan-written-once", "bppsa-3.json",
       [](json &d) { ops(d, 1)[7]["writes"] = json::array({7}); },
       "ranks[1].ops[7]: combine jv (s=1, b=0) writes scan tensor 1, which "
       "ranks[1].ops[5] writes too"},
      {"scan-operand-kind", "bppsa-3.json",
       [](json &d) { ops(d, 1)[5]["product"] = "jj"; },
       "ranks[0].ops[2]: backward_weight (s=0, b=0) reads scan tensor 1 as its "
       "output gradient, which needs a vector; it is a matrix"},
      {"scan-written", "bppsa-3.json", [](json &d) { erase(d, 1, 7); },
       "scan tensor 2 is written by no op"},
      // --- what a rank holds (checkRank, checkTransfers) ------------------
      {"compute-weights", "fsdp-2.json",
       [](json &d) {
         erase(d, 1, 9); // release_weights (s=0)
         erase(d, 1, 4); // fetch_weights (s=0)
         erase(d, 0, 3); // send_weights (s=0)
       },
       "ranks[1].ops[7]: backward (s=0, b=1) needs stage 0's weights, which "
       "rank 1 neither owns nor fetched",
       1},
      {"compute-inputs", "gpipe-2.json",
       [](json &d) {
         erase(d, 1, 0); // recv of tensor 0
         erase(d, 0, 1); // its send
       },
       "ranks[1].ops[0]: forward (s=1, b=0) needs act (s=0, b=0), which no "
       "earlier op of rank 1 computes or receives",
       1},
      {"release-fetched", "fsdp-2.json", [](json &d) { duplicate(d, 1, 2); },
       "ranks[1].ops[3]: releases stage 0's weights, which rank 1 has not "
       "fetched",
       1},
      {"send-tensor", "gpipe-2.json", [](json &d) { move(d, 0, 1, 0); },
       "ranks[0].ops[0]: send act (s=0, b=0) to rank 1 needs act (s=0, b=0), "
       "which no earlier op of rank 0 computes or receives",
       0},
      {"send-weights-owner", "fsdp-2.json",
       [](json &d) { ops(d, 0)[3]["stage"] = 1; },
       "ranks[0].ops[3]: send_weights (s=1) to rank 1: rank 0 does not own "
       "stage 1",
       0},
      {"fetch-not-owned", "fsdp-2.json",
       [](json &d) { ops(d, 1)[4]["stage"] = 1; },
       "ranks[1].ops[4]: fetch_weights (s=1) from rank 0: rank 1 owns stage 1",
       1},
      {"fetch-once", "fsdp-2.json", [](json &d) { erase(d, 1, 2); },
       "ranks[1].ops[3]: fetch_weights (s=0) from rank 0: rank 1 already holds "
       "a fetched copy (release it first)",
       1},
      // --- gradients reach the optimizer (trackGradient, checkGradients) --
      {"step-owner", "gpipe-2.json", [](json &d) { ops(d, 0)[7]["stage"] = 1; },
       "ranks[0].ops[7]: optimizer_step (s=1): rank 0 does not own stage 1", 0},
      {"step-after-gradients", "gpipe-2.json",
       [](json &d) { move(d, 0, 7, 6); },
       "ranks[0].ops[6]: optimizer_step (s=0) comes before backward (s=0, b=1) "
       "at ranks[0].ops[7], whose weight gradient it would miss",
       0},
      {"step-after-gradients", "ddp-2.json",
       [](json &d) {
         move(d, 0, 8, 7);
         move(d, 1, 8, 7);
       },
       "ranks[0].ops[7]: optimizer_step (s=1) comes before allreduce_grad "
       "(s=1) over [0, 1] at ranks[0].ops[8], whose summed gradient it would "
       "miss",
       0},
      {"step-once", "gpipe-2.json", [](json &d) { duplicate(d, 0, 7); },
       "ranks[0].ops[8]: optimizer_step (s=0) runs twice on rank 0 (first at "
       "ranks[0].ops[7])",
       0},
      {"owner-steps", "gpipe-2.json", [](json &d) { erase(d, 0, 7); },
       "ranks[0]: rank 0 owns stage 0 but runs no optimizer_step (s=0): every "
       "owner applies the stage's gradient once per step",
       0},
      {"wgrad-before-last-collective", "ddp-2.json",
       [](json &d) { move(d, 0, 9, 10); },
       "ranks[0].ops[10]: backward (s=0, b=2) adds to stage 0's weight "
       "gradient after rank 0's last collective on it (ranks[0].ops[9]): its "
       "contribution would be lost",
       0},
      {"wgrad-reaches-step", "fsdp-2.json",
       [](json &d) {
         erase(d, 1, 10); // reduce_grad (s=0)
         erase(d, 0, 8);
       },
       "ranks[1].ops[8]: backward (s=0, b=1) computes stage 0's weight "
       "gradient on rank 1, which neither owns stage 0 nor reduces its "
       "gradient in a collective: its contribution would be lost",
       1},
      // --- replicas and reductions (checkReduction, checkReplicaReduced) --
      {"reduce-root-owns", "fsdp-2.json",
       [](json &d) {
         ops(d, 0)[6]["root"] = 0;
         ops(d, 1)[6]["root"] = 0;
       },
       "ranks[0].ops[6]: reduce_grad (s=1) onto rank 0 over [0, 1]: the root, "
       "rank 0, does not own stage 1",
       0},
      {"allreduce-over-owners", "ddp-2.json",
       [](json &d) {
         ops(d, 0)[7]["members"] = json::array({0});
         ops(d, 1)[7]["members"] = json::array({1});
       },
       "ranks[0].ops[7]: allreduce_grad (s=1) over [0]: the members must "
       "include every owner of stage 1, [0, 1] (an owner left out would step "
       "with another gradient than the others)",
       0},
      {"reduce-single-owner", "ddp-2.json",
       [](json &d) {
         for (int r : {0, 1}) {
           ops(d, r)[7]["op"] = "reduce_grad";
           ops(d, r)[7]["root"] = 0;
         }
       },
       "ranks[0].ops[7]: reduce_grad (s=1) onto rank 0 over [0, 1]: stage 1 "
       "has 2 owners, [0, 1], and a reduce gives the summed gradient to its "
       "root alone: the other owners would step without it (reduce a "
       "replicated stage with allreduce_grad over its owners)",
       0},
      {"replicas-reduced", "ddp-2.json",
       [](json &d) {
         erase(d, 0, 7);
         erase(d, 1, 7);
       },
       "ranks[0]: rank 0 owns stage 1 with the ranks [0, 1] but reduces no "
       "gradient of it: its replica would step with its own gradient alone (an "
       "allreduce_grad over the owners keeps the replicas equal)",
       0},
      // --- tied weights (checkTiedGrad) -----------------------------------
      {"step-after-tied-grad", "tied-ddp-2.json",
       [](json &d) {
         move(d, 0, 17, 16);
         move(d, 1, 17, 16);
       },
       "ranks[0].ops[16]: optimizer_step (s=0) is not preceded by rank 0's "
       "tied_grad (tie 0): stage 0 would step without the summed gradient of "
       "its tied weight",
       0},
      {"wgrad-before-tied-grad", "tied-ddp-2.json",
       [](json &d) {
         move(d, 0, 16, 14);
         move(d, 1, 16, 14);
       },
       "ranks[0].ops[15]: backward (s=0, b=2) adds to tied stage 0's weight "
       "gradient after rank 0's tied_grad (ranks[0].ops[14]): its contribution "
       "would be lost",
       0},
      {"reduce-before-tied-grad", "tied-ddp-2.json",
       [](json &d) {
         move(d, 0, 16, 15);
         move(d, 1, 16, 15);
       },
       "ranks[0].ops[16]: allreduce_grad (s=0) over [0, 1] reduces tied stage "
       "0's gradient after rank 0's tied_grad (ranks[0].ops[15]), which "
       "already replaced it with the tied sum",
       0},
      {"owner-runs-tied-grad", "tied-ddp-2.json",
       [](json &d) {
         for (int r : {0, 1})
           for (int i : {18, 17, 16})
             erase(d, r, i);
       },
       "ranks[0]: rank 0 owns tied stage 0 but runs no tied_grad (tie 0): its "
       "copy of the tied weight would miss the other stages' gradients",
       0},
      {"tied-grad-once", "tied-ddp-2.json",
       [](json &d) {
         duplicate(d, 0, 16);
         duplicate(d, 1, 16);
       },
       "ranks[0].ops[17]: tied_grad (tie 0: stages [0, 2]) over [0] runs twice "
       "on rank 0 (first at ranks[0].ops[16])",
       0},
      {"tied-grad-members", "tied-1f1b-4.json",
       [](json &d) {
         ops(d, 0)[27]["members"] = json::array({0});
         ops(d, 3)[26]["members"] = json::array({3});
       },
       "ranks[0].ops[27]: tied_grad (tie 0: stages [0, 3]) over [0]: the "
       "members must be the owners of the tied stages, [0, 3]",
       0},
      // --- tags and groups (checkTags, checkGroupsUsed) -------------------
      {"tag-fits", "gpipe-2.json", [](json &) {},
       "ranks[1].ops[7]: tag 3 exceeds the transport's largest tag 2", 0,
       nullptr, ValidateOptions{2}},
      {"tag-unique", "gpipe-2.json",
       [](json &d) {
         ops(d, 0)[1]["tag"] = 1;
         ops(d, 1)[0]["tag"] = 1;
       },
       "ranks[0].ops[3].ops[0]: send act (s=0, b=1) to rank 1 reuses tag 1 of "
       "ranks[0].ops[1] (tags are unique per message in a step)",
       0},
      // The loader refuses an unused group of an index itself, and a single
      // document's groups are its collectives' members: only a program
      // changed in memory reaches this second line of defence.
      {"group-used", "ddp-2.json", [](json &) {},
       "collective_groups[1] [0]: no collective op of any rank has these "
       "members",
       -1, [](Program &p) { p.groups.push_back({0}); }},
      // --- matching and deadlock freedom (matching.cpp) -------------------
      {"collective-match", "ddp-2.json",
       [](json &d) { ops(d, 1)[7]["bytes"] = 4096; },
       "ranks[1].ops[7]: allreduce_grad (s=1) over [0, 1] does not match rank "
       "0's 1st collective on these members, ranks[0].ops[7]: allreduce_grad "
       "(s=1) over [0, 1] (the sizes differ)"},
      {"transfer-match", "gpipe-2.json",
       [](json &d) { ops(d, 1)[0]["bytes"] = 2048; },
       "ranks[0].ops[1]: send act (s=0, b=0) to rank 1 (tag 0, 4096 bytes) "
       "does not match the 1st receive from rank 0 on rank 1, ranks[1].ops[0]: "
       "recv act (s=0, b=0) from rank 0 (tag 0, 2048 bytes) (the sizes "
       "differ)"},
      {"deadlock-cycle", "gpipe-2.json",
       [](json &d) {
         // rank 0 receives b=0's gradient before it sends b=1's input
         json group = ops(d, 0)[3]["ops"];
         erase(d, 0, 3);
         ops(d, 0).insert(ops(d, 0).begin() + 3, group[0]);
         ops(d, 0).insert(ops(d, 0).begin() + 3, group[1]);
       },
       "the rank programs deadlock: rank 0 waits in ranks[0].ops[3] (recv grad "
       "(s=1, b=0) from rank 1) for rank 1, rank 1 waits in ranks[1].ops[2] "
       "(recv act (s=0, b=1) from rank 0) for rank 0 (a cycle)"},
      {"collective-counterpart", "ddp-2.json",
       [](json &d) { duplicate(d, 0, 10); },
       "ranks[0].ops[11]: allreduce_grad (s=0) over [0, 1] has no counterpart: "
       "rank 1 ends without calling it"},
      {"transfer-counterpart", "gpipe-2.json",
       [](json &d) {
         ops(d, 0).push_back(json{{"op", "send"},
                                  {"reads", {0}},
                                  {"peer", 1},
                                  {"tag", 9},
                                  {"bytes", 4096}});
       },
       "ranks[0].ops[8]: send act (s=0, b=0) to rank 1 has no matching "
       "receive: rank 1 ends without posting it (rank 0 sends 3 messages to "
       "rank 1, which receives 2)"},
  };
}

std::string messageOf(const Row &row, int rank) {
  json doc = program(row.program);
  row.breakIt(doc);
  try {
    Program p = parseProgram(doc.dump(), "t.json", -1);
    if (row.breakLoaded)
      row.breakLoaded(p);
    if (rank < 0)
      validate(p, row.options);
    else
      validateRank(p, rank, row.options);
  } catch (const ProgramError &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ValidatorRules, EachRowBreaksItsRuleAlone) {
  for (const Row &row : rows()) {
    SCOPED_TRACE(std::string(row.rule) + " on " + row.program);
    EXPECT_EQ(messageOf(row, -1), "t.json: " + row.message);
    if (row.rank >= 0) {
      EXPECT_EQ(messageOf(row, row.rank), "t.json: " + row.message);
    }
  }
}

TEST(ValidatorRules, TheProgramsAreValidUnbroken) {
  for (const char *name :
       {"gpipe-2.json", "ddp-2.json", "fsdp-2.json", "bppsa-3.json",
        "tied-ddp-2.json", "tied-1f1b-4.json"}) {
    Program p = parseProgram(program(name).dump(), name, -1);
    EXPECT_NO_THROW(validate(p)) << name;
  }
}

// The rules named in a source file, in order; a `fail(` call with no name
// between it and the previous call is reported as "(unnamed at LINE)".
std::vector<std::string> rulesIn(const std::string &file) {
  std::ifstream in(std::string(PIPESCHED_RUNTIME_SOURCE_DIR) + "/" + file);
  EXPECT_TRUE(in) << file;
  static const std::regex name(R"(^\s*// rule: ([a-z0-9-]+)\s*$)");
  static const std::regex call(R"((^|[^A-Za-z_])fail\()");
  static const std::regex definition(R"(void fail\()");
  std::vector<std::string> rules, pending;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (std::regex_match(line, m, name)) {
      pending.push_back(m[1]);
    } else if (std::regex_search(line, call) &&
               !std::regex_search(line, definition)) {
      rules.push_back(pending.empty()
                          ? file + ": (unnamed at " + std::to_string(n) + ")"
                          : pending.front());
      if (!pending.empty())
        pending.erase(pending.begin());
    }
  }
  for (const std::string &left : pending)
    rules.push_back(file + ": (" + left + " names no check)");
  return rules;
}

TEST(ValidatorRules, RulesHaveRows) {
  std::set<std::string> inSource, inTable;
  for (const char *file : {"program/validator.cpp", "program/matching.cpp"})
    for (const std::string &rule : rulesIn(file))
      EXPECT_TRUE(inSource.insert(rule).second) << "two checks named " << rule;
  for (const Row &row : rows())
    inTable.insert(row.rule);
  for (const auto &[rule, why] : kUnreachable) {
    EXPECT_TRUE(inTable.insert(rule).second) << rule << " has a row and is unreachable";
    EXPECT_FALSE(why.empty()) << rule;
  }
  for (const std::string &rule : inSource)
    EXPECT_TRUE(inTable.count(rule)) << rule << ": a check with no row in this table";
  for (const std::string &rule : inTable)
    EXPECT_TRUE(inSource.count(rule)) << rule << ": a row naming no check in the source";
  EXPECT_GE(inSource.size(), 40u); // the scan found the checks at all
}

} // namespace
