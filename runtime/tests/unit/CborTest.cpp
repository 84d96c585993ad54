// CBOR programs and the per-rank layout (docs/program-format.md, "Big
// programs"): the same Program as from JSON, and hostile CBOR refused with
// its byte, quickly and without a crash.
#include "program/document.h"
#include "program/loader.h"
#include "program/validator.h"

#include "../support/split_program.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace pipesched::runtime;
using json = nlohmann::json;
using pipesched::program::Encoding;

namespace {

json program(const std::string &name) {
  std::ifstream in(std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name);
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

std::string cbor(const json &doc) { return split::encodeDocument(doc, Encoding::Cbor); }

std::string bytes(std::initializer_list<int> list) {
  std::string s;
  for (int b : list)
    s += char(b);
  return s;
}

// The message of loading + validating `data` as "t.cbor", "" if accepted.
std::string errorOf(const std::string &data) {
  try {
    validate(parseProgram(data, "t.cbor", -1));
  } catch (const ProgramError &e) {
    return e.what();
  }
  return "";
}

// Everything the loader fills, as text: two programs load the same when
// their texts are equal.
std::string dump(const Program &p) {
  std::ostringstream s;
  s << p.stages << ' ' << p.microbatches << ' ' << p.workers << ' ' << p.splitBackward << ' '
    << p.makespan << ' ' << p.replayedMakespan << ' ' << p.scanTensors << '\n';
  for (int v = 0; v < p.graph.stages(); ++v)
    for (int w : p.graph.successors(v))
      s << v << "->" << w << ' ';
  for (auto *list : {&p.cost.fwd, &p.cost.bwd, &p.cost.bwdW})
    for (double d : *list)
      s << d << ' ';
  s << p.cost.actBytes << ' ' << p.cost.weightBytes << ' ' << p.cost.tickNs << ' '
    << p.cost.transfer << '\n';
  for (int64_t l : p.layers)
    s << l << ' ';
  for (const auto &g : p.groups)
    s << listString(g);
  for (const auto &t : p.ties)
    s << listString(t);
  s << '\n';
  auto op = [&](const RankProgram &rp, const Op &o) {
    s << int(o.kind) << ' ' << o.stage << ' ' << o.microbatch << ' ' << o.peer << ' '
      << o.root << ' ' << o.group << ' ' << o.tie << ' ' << o.tag << ' ' << o.bytes << ' '
      << o.tensor << ' ' << int(o.product) << ' ' << o.start << ' ' << o.end << ' '
      << o.first << ' ' << o.count << ' ' << o.writes << " r";
    for (int64_t id : rp.reads(o))
      s << ' ' << id;
    s << " w";
    for (int64_t id : rp.writes(o))
      s << ' ' << id;
    s << '\n';
  };
  for (const RankProgram &rp : p.ranks) {
    s << "rank " << rp.rank << ' ' << listString(rp.owns) << '\n';
    for (const Op &o : rp.ops)
      op(rp, o);
    for (const Op &o : rp.children)
      op(rp, o);
  }
  return s.str();
}

const char *const kFixtures[] = {
    "ddp-2.json",        "gpipe-2.json",          "1f1b-4.json",
    "fsdp-2.json",       "interleaved-2.json",    "zb-2.json",
    "tied-zbv-4.json",   "dag-encoders-1f1b.json", "dag-skip-lpp.json",
    "independent-2.json"};

TEST(Cbor, FixturesLoadAsFromJson) {
  for (const char *name : kFixtures) {
    const json doc = program(name);
    Program fromJson = parseProgram(doc.dump(), "t.json", -1);
    Program fromCbor = parseProgram(cbor(doc), "t.cbor", -1);
    validate(fromCbor);
    EXPECT_EQ(dump(fromCbor), dump(fromJson)) << name;
    EXPECT_GT(dump(fromJson).size(), 100u);
  }
}

// The loader's CBOR reader (document.cpp) makes nlohmann's DOM: the same
// as nlohmann's from_cbor, and as the JSON it was written from.
TEST(Cbor, SameDomAsNlohmann) {
  json doc = program("tied-zbv-4.json");
  doc["extra"] = {{"half", 1.5}, {"negative", -7}, {"big", uint64_t(1) << 63},
                  {"text", "caf\u00e9"}, {"null", nullptr}, {"yes", true}, {"no", false},
                  {"nested", json::array({json::object(), json::array(), 0.1})}};
  const std::string data = cbor(doc);
  const json read = decodeDocument(data, "t.cbor");
  EXPECT_EQ(read, json::from_cbor(data));
  EXPECT_EQ(read, doc);
  // Half and single precision floats (to_cbor writes doubles).
  EXPECT_EQ(decodeDocument(bytes({0xa2, 0x61, 'h', 0xf9, 0x3e, 0x00, 0x61, 's', 0xfa, 0xc0,
                                  0x20, 0x00, 0x00}),
                           "t.cbor"),
            json({{"h", 1.5}, {"s", -2.5}}));
}

// A writer may stream: maps and arrays of indefinite length (0xbf, 0x9f,
// ended by 0xff), and text in chunks.
void indefinite(const json &v, std::string &out) {
  if (v.is_object() || v.is_array()) {
    out += char(v.is_object() ? 0xbf : 0x9f);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (v.is_object()) { // the key in two chunks
        const std::string &k = it.key();
        out += char(0x7f) + cbor(json(k.substr(0, 1))).substr(0) +
               cbor(json(k.substr(1))) + char(0xff);
      }
      indefinite(it.value(), out);
    }
    out += char(0xff);
    return;
  }
  out += cbor(v);
}

TEST(Cbor, IndefiniteLengths) {
  const json doc = program("1f1b-4.json");
  std::string data;
  indefinite(doc, data);
  EXPECT_EQ(uint8_t(data[0]), 0xbf);
  EXPECT_EQ(dump(parseProgram(data, "t.cbor", 4)), dump(parseProgram(doc.dump(), "t", 4)));
}

TEST(Cbor, Encoding) {
  EXPECT_EQ(encodingOf("{}", "f"), Encoding::Json);
  EXPECT_EQ(encodingOf("\n {}", "f"), Encoding::Json);
  EXPECT_EQ(encodingOf(bytes({0xa0}), "f"), Encoding::Cbor);
  EXPECT_EQ(encodingOf(bytes({0xbf, 0xff}), "f"), Encoding::Cbor);
  EXPECT_EQ(errorOf(bytes({0x80})),
            "t.cbor: neither JSON nor CBOR: first byte 0x80 (a program is a JSON object, "
            "'{', or a CBOR map, 0xa0-0xbb or 0xbf)");
  EXPECT_EQ(errorOf("[1]"), "t.cbor: neither JSON nor CBOR: first byte 0x5b (a program "
                            "is a JSON object, '{', or a CBOR map, 0xa0-0xbb or 0xbf)");
  EXPECT_EQ(errorOf(""), "t.cbor: the file is empty (0 bytes), not a program");
}

// Deeper than kMaxJsonDepth: refused at the container that is too deep,
// before nlohmann's reader (which recurses) sees it.
TEST(Cbor, DeepNestingRefused) {
  std::string data = bytes({0xa1, 0x61, 'a'}) + std::string(1000000, char(0x81)) + '\0';
  EXPECT_EQ(errorOf(data), "t.cbor: invalid CBOR: nested deeper than 16 levels (a program "
                           "nests at most 8) (byte 19)");
  std::string indefinite = bytes({0xbf, 0x61, 'a'}) + std::string(1000000, char(0x9f));
  EXPECT_EQ(errorOf(indefinite), "t.cbor: invalid CBOR: nested deeper than 16 levels (a "
                                 "program nests at most 8) (byte 19)");
}

// A length header claiming 2^60 elements is a lie the bytes left disprove:
// refused at once, nothing sized by it.
TEST(Cbor, HugeLengthHeadersRefused) {
  auto start = std::chrono::steady_clock::now();
  const std::string huge = bytes({0x10, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0x9b}) + huge),
            "t.cbor: invalid CBOR: truncated: an array of 1152921504606846976 elements, "
            "only 0 bytes remain (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xbb}) + huge + "abc"),
            "t.cbor: invalid CBOR: truncated: a map of 1152921504606846976 entries, only 3 "
            "bytes remain (byte 1)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x7b}) + huge + "xy"),
            "t.cbor: invalid CBOR: truncated: a text string of 1152921504606846976 bytes, "
            "2 remain (byte 2)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(Cbor, WhatAProgramHasNot) {
  EXPECT_EQ(errorOf(bytes({0xa1, 0x01, 0x02})),
            "t.cbor: invalid CBOR: a map key that is not a text string (major type 0) "
            "(byte 2)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0x41, 0x00})),
            "t.cbor: invalid CBOR: a byte string (a program holds none) (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0xc1, 0x00})),
            "t.cbor: invalid CBOR: a tag (a program uses none) (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0xf7})),
            "t.cbor: invalid CBOR: the simple value 23 (a program uses false, true and null "
            "only) (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0xf9, 0x7c, 0x00})),
            "t.cbor: invalid CBOR: a float that is not finite (JSON has no infinity or NaN) "
            "(byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x62, 0xff, 0xfe, 0x00})),
            "t.cbor: invalid CBOR: a text string that is not UTF-8 (byte 2)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                           0xff})),
            "t.cbor: invalid CBOR: a negative integer below -2^63 (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0x00, 0xff})),
            "t.cbor: invalid CBOR: 1 bytes after the document (byte 5)");
  EXPECT_EQ(errorOf(bytes({0xbf, 0x61, 'a', 0xff})),
            "t.cbor: invalid CBOR: an unexpected break (0xff) (byte 4)");
  EXPECT_EQ(errorOf(bytes({0xa1, 0x61, 'a', 0x1c})),
            "t.cbor: invalid CBOR: reserved additional information 28 (byte 4)");
}

// A float where an integer belongs: the loader's own message, with the path.
TEST(Cbor, FloatsWhereIntegersBelong) {
  json doc = program("gpipe-2.json");
  doc["stages"] = 2.0;
  EXPECT_EQ(errorOf(cbor(doc)), "t.cbor: stages: expected an integer, got number 2.0");
  doc = program("gpipe-2.json");
  doc["ranks"][1]["ops"][0]["peer"] = 0.5;
  EXPECT_EQ(errorOf(cbor(doc)),
            "t.cbor: ranks[1].ops[0].peer: expected an integer, got number 0.5");
}

// Every truncation of a program is refused with a message, none crashes.
TEST(Cbor, EveryTruncationRefused) {
  const std::string data = cbor(program("gpipe-2.json"));
  for (size_t n = 1; n < data.size(); ++n) {
    std::string error = errorOf(data.substr(0, n));
    ASSERT_NE(error.find("t.cbor: invalid CBOR: truncated"), std::string::npos)
        << n << ": " << error;
    ASSERT_NE(error.find("(byte "), std::string::npos) << error;
  }
}

// A per-rank directory in a fresh temporary folder.
struct PerRankDir {
  std::string dir;
  PerRankDir(const char *fixture, Encoding e) {
    char name[] = "/tmp/pipesched-cbor-XXXXXX";
    dir = mkdtemp(name);
    split::splitProgram(program(fixture), dir, e);
  }
  ~PerRankDir() { std::system(("rm -rf '" + dir + "'").c_str()); }
};

// One rank's load holds that rank's ops only, everyone's `owns`, and the
// index's groups; all ranks' load is the single document's program.
TEST(PerRank, LoadsOneRankOrAll) {
  for (Encoding e : {Encoding::Json, Encoding::Cbor}) {
    PerRankDir d("tied-zbv-4.json", e);
    Program whole = parseProgram(program("tied-zbv-4.json").dump(), "t", 4);
    Program all = loadProgram(d.dir, 4);
    validate(all);
    EXPECT_EQ(all.onlyRank, -1);
    EXPECT_TRUE(all.perRank);
    EXPECT_EQ(dump(all), dump(whole));
    for (int r = 0; r < 4; ++r) {
      Program one = loadProgram(d.dir, 4, r);
      validateRank(one, r); // what a run checks: its own ops suffice
      EXPECT_EQ(one.onlyRank, r);
      EXPECT_EQ(one.crc32, all.crc32);
      EXPECT_EQ(one.groups, all.groups);
      for (int q = 0; q < 4; ++q) {
        EXPECT_EQ(one.ranks[q].owns, whole.ranks[q].owns);
        EXPECT_EQ(one.ranks[q].ops.size(), q == r ? whole.ranks[q].ops.size() : 0u);
      }
    }
  }
}

// The index's groups are Program::groups in the index's order, whatever it
// is (the compiler sorts them; the reader must not depend on it).
TEST(PerRank, GroupsInTheIndexOrder) {
  PerRankDir d("dag-encoders-lpp.json", Encoding::Json);
  const std::string index = d.dir + "/index.json";
  std::ifstream in(index);
  json doc = json::parse(in);
  ASSERT_EQ(doc["collective_groups"].size(), 3u);
  std::reverse(doc["collective_groups"].begin(), doc["collective_groups"].end());
  split::writeFile(index, doc.dump());
  Program all = loadProgram(d.dir, 6);
  validate(all);
  EXPECT_EQ(all.groups, doc["collective_groups"].get<std::vector<std::vector<int>>>());
  EXPECT_EQ(loadProgram(d.dir, 6, 1).groups, all.groups);
}

} // namespace

namespace {

std::string loadError(const std::string &path, int rank) {
  try {
    loadProgram(path, -1, rank);
  } catch (const ProgramError &e) {
    return e.what();
  }
  return "";
}

// An index claiming a huge shape is bounded by its rank files' sizes before
// anything of that shape is allocated; a size claim beyond 2^48 is refused.
TEST(PerRank, HugeIndexClaimsRefused) {
  PerRankDir d("gpipe-2.json", Encoding::Json);
  const std::string index = d.dir + "/index.json";
  std::ifstream in(index);
  const json good = json::parse(in);
  json doc = good;
  doc["stages"] = 2147483646;
  split::writeFile(index, doc.dump());
  const int64_t bytes = good["rank_files"][0]["bytes"].get<int64_t>() +
                        good["rank_files"][1]["bytes"].get<int64_t>();
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(loadError(d.dir, 0),
            index + ": 2147483646 stages x 2 microbatches make 4294967292 jobs per "
                    "direction, but the rank files (" +
                std::to_string(bytes) + " bytes in all) hold at most " +
                std::to_string(bytes / 40) +
                " compute ops (every forward and backward runs exactly once)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  doc = good;
  doc["rank_files"][1]["bytes"] = int64_t(1) << 60;
  split::writeFile(index, doc.dump());
  EXPECT_EQ(loadError(d.dir, 0), index + ": rank_files[1].bytes: 1152921504606846976 is "
                                         "out of range [0, 281474976710656)");
  doc = good;
  doc["rank_files"][0]["crc32"] = int64_t(1) << 32;
  split::writeFile(index, doc.dump());
  EXPECT_EQ(loadError(d.dir, 0), index + ": rank_files[0].crc32: 4294967296 is out of "
                                         "range [0, 4294967296)");
  doc = good;
  doc["layout"] = "per-node";
  split::writeFile(index, doc.dump());
  EXPECT_EQ(loadError(d.dir, 0), index + ": layout: expected \"per-rank\", got \"per-node\"");
}

} // namespace
