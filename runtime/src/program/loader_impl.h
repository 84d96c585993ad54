// The loader's internals (loader.h is its interface), shared by the files
// that implement it, one part of a program each:
//   loader.cpp         a single document, and what a path names;
//   load_header.cpp    the top-level fields, sizes and costs;
//   load_stages.cpp    the stage graph, layer counts and tied stages;
//   load_ops.cpp       each rank's owned stages and ops;
//   load_groups.cpp    the collective groups;
//   load_per_rank.cpp  the per-rank layout: the index and the rank files.
#pragma once

#include "program/field_reader.h"
#include "program/program.h"

#include "pipesched/Program/Schema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pipesched::runtime::loading {

namespace schema = pipesched::program;

// Hash of a rank list, to intern collective groups in O(size).
struct GroupHash {
  size_t operator()(const std::vector<int> &g) const {
    uint64_t h = 1469598103934665603ull;
    for (int x : g)
      h = (h ^ uint64_t(uint32_t(x))) * 1099511628211ull;
    return size_t(h);
  }
};

// A rank file as the per-rank index describes it (rank_files[r]).
struct RankFile {
  std::string name;
  int64_t bytes = 0;
  uint32_t crc32 = 0;
  std::vector<int> owns;
};

class Loader : public FieldReader {
public:
  Loader(std::string source, int worldSize)
      : FieldReader(std::move(source)), worldSize_(worldSize) {}

  // A single document: every rank's ops.
  Program load(const json &doc);
  // A per-rank index (docs/program-format.md, "Big programs"): the
  // top-level fields, every rank's `owns` and the collective groups; no ops
  // yet (loadRankFile adds a rank's).
  // `dir` holds the rank files: each must be there, of the size the index
  // gives (the sizes bound the program before anything of it is allocated).
  Program loadIndex(const json &doc, const std::string &dir);
  // Rank r's file in `dir`, checked against the index (size and CRC-32
  // before parsing, then rank and owns), its ops loaded into p.ranks[r].
  void loadRankFile(const std::string &dir, int r, Program &p);
  // After every rank file: each listed group is some collective's members.
  void checkGroupsUsed() const;

private:
  struct OpFields;

  // load_header.cpp
  void loadTop(const json &doc, Program &p, bool index);
  void checkTopFields(const json &doc, bool index) const;
  void checkVersion(const json &doc) const;
  void checkSize(const Program &p, int64_t computeOps, const std::string &why) const;
  void loadCost(const json &doc, Program &p) const;
  // load_stages.cpp
  void loadStageGraph(const json &doc, Program &p) const;
  void loadLayers(const json &doc, Program &p) const;
  void loadTies(const json &doc, Program &p) const;
  // load_ops.cpp
  void loadRank(const json &v, const JsonPath &where, int index, Program &p);
  void loadOwns(const json &owns, const JsonPath &where, const Program &p,
                RankProgram &rp) const;
  void checkOwners(const Program &p, const JsonPath &where, const std::string &list) const;
  Op loadOp(const json &v, const JsonPath &where, int rank, bool inGroup, Program &p,
            RankProgram &rp);
  OpKind readOpFields(const json &v, bool inGroup, OpFields &f) const;
  int64_t intOf(const OpFields &f, schema::Field field, int64_t lo, int64_t hi) const;
  void loadJob(const OpFields &f, const Program &p, RankProgram &rp, Op &op) const;
  void loadTransfer(const OpFields &f, int rank, const Program &p, Op &op) const;
  void loadGroup(const OpFields &f, int rank, Program &p, RankProgram &rp, Op &op);
  void loadTensors(const json *reads, const json *writes, const JsonPath &where,
                   const Program &p, RankProgram &rp, Op &op) const;
  int64_t loadTensorList(const json &v, const JsonPath &where, const Program &p) const;
  // load_groups.cpp
  void loadCollective(const OpFields &f, int rank, Program &p, Op &op);
  int internGroup(const json &v, const JsonPath &where, int caller, Program &p);
  void loadCollectiveGroups(const json &doc, Program &p);
  // load_per_rank.cpp
  void loadRankFiles(const json &doc, Program &p);
  void fillScanValues(Program &p, const RankProgram &rp) const;

  int worldSize_;
  std::unordered_map<std::vector<int>, int, GroupHash> groupIndex_;
  std::vector<int> scratch_;
  // The per-rank layout: the index's rank files, and its collective groups
  // (fixed: a member list not among them is an error) with whether some
  // op uses each.
  std::string indexSource_;
  std::string dir_;
  std::vector<RankFile> files_;
  bool fixedGroups_ = false;
  std::vector<char> groupUsed_;
};

// An op's fields, read in one pass: which are present, and where.
struct Loader::OpFields {
  explicit OpFields(const JsonPath &at) : where(at) {}
  const JsonPath &where;
  const json *fields[schema::kNumFields] = {};
  uint32_t present = 0;
  std::string_view name; // the op's name, as the document spells it

  const json &field(schema::Field f) const { return *fields[__builtin_ctz(uint32_t(f))]; }
  JsonPath at(schema::Field f) const { return where.key(schema::fieldName(f)); }
  bool has(schema::Field f) const { return (present & uint32_t(f)) != 0; }
};

// load_per_rank.cpp: "index.json or index.cbor", for messages.
std::string indexNames();
// The index of a per-rank directory: "" when it has none; throws when it
// has both encodings' (which is the program?).
std::string indexIn(const std::string &dir);
bool isIndexName(const std::string &name);
// A per-rank program: its index (read already), then rank `rank`'s file
// (-1: every rank's).
Program loadPerRank(const std::string &dir, const std::string &indexPath,
                    const std::string &bytes, const json &index, int worldSize, int rank);

} // namespace pipesched::runtime::loading
