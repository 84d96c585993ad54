#include "program/loader.h"

#include "program/document.h"
#include "program/json_path.h"
#include "program/roles.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

namespace pipesched::runtime {
namespace {

using json = nlohmann::json;
namespace schema = pipesched::program;

constexpr int64_t kNoUpperBound = std::numeric_limits<int64_t>::max();
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
// The fewest bytes a compute op takes in a rank file (CBOR, the smaller
// encoding: {"op":"forward","stage":0,"microbatch":0,"reads":[],
// "writes":[0]} is 46 bytes): the index's file sizes bound the jobs.
constexpr int64_t kMinComputeOpBytes = 40;

using schema::layout::indexName;
// "index.json or index.cbor", for messages.
std::string indexNames() {
  return indexName(program::Encoding::Json) + " or " + indexName(program::Encoding::Cbor);
}

// Hash of a rank list, to intern collective groups in O(size).
struct GroupHash {
  size_t operator()(const std::vector<int> &g) const {
    uint64_t h = 1469598103934665603ull;
    for (int x : g)
      h = (h ^ uint64_t(uint32_t(x))) * 1099511628211ull;
    return size_t(h);
  }
};

// A value for a message, at most ~40 characters: containers are written
// element by element until the budget is spent, so a huge value costs
// nothing (nesting is bounded by the parser, kMaxJsonDepth).
void preview(const json &v, std::string &out, size_t budget) {
  if (out.size() > budget)
    return;
  if (v.is_array() || v.is_object()) {
    out += v.is_array() ? "[" : "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
      out += first ? "" : ",";
      first = false;
      if (v.is_object())
        out += json(it.key()).dump() + ":";
      preview(it.value(), out, budget);
    }
    out += v.is_array() ? "]" : "}";
    return;
  }
  if (v.is_string() && v.get_ref<const std::string &>().size() > budget) {
    out += json(v.get_ref<const std::string &>().substr(0, budget)).dump();
    return;
  }
  out += v.dump();
}

std::string shortDump(const json &v) {
  std::string s;
  preview(v, s, 40);
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return s;
}

std::string describeValue(const json &v) {
  return std::string(v.type_name()) + " " + shortDump(v);
}

// The index of an op field in the schema's kFieldNames, or -1.
int fieldIndex(const std::string &key) {
  for (int i = 0; i < schema::kNumFields; ++i)
    if (key == schema::kFieldNames[i])
      return i;
  return -1;
}

// A quick count of the compute ops in the document, tolerant of anything
// malformed (the real checks come later): it bounds stages x microbatches
// before anything of that size is allocated.
int64_t countComputeOps(const json &doc) {
  static const std::string kRanks(schema::top::kRanks),
      kOps(schema::rank::kOps), kOp(schema::kFieldNames[0]);
  int64_t n = 0;
  auto ranks = doc.find(kRanks);
  if (ranks == doc.end() || !ranks->is_array())
    return 0;
  for (const json &rank : *ranks) {
    if (!rank.is_object())
      continue;
    auto ops = rank.find(kOps);
    if (ops == rank.end() || !ops->is_array())
      continue;
    for (const json &op : *ops) {
      if (!op.is_object())
        continue;
      auto name = op.find(kOp);
      if (name == op.end() || !name->is_string())
        continue;
      std::optional<OpKind> kind = schema::opKindNamed(name->get_ref<const std::string &>());
      n += kind && isCompute(*kind);
    }
  }
  return n;
}

// A rank file as the per-rank index describes it (rank_files[r]).
struct RankFile {
  std::string name;
  int64_t bytes = 0;
  uint32_t crc32 = 0;
  std::vector<int> owns;
};

// What a file that is not a regular one is, for messages.
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

// Refuses what stat() says cannot be a program file: a directory, anything
// but a regular file (a device reads forever, a FIFO blocks), and a
// regular file whose size is not `expect` (when >= 0: the index's).
void checkProgramFile(const std::string &path, const struct stat &st, int64_t expect) {
  if (S_ISDIR(st.st_mode))
    throw ProgramError(path + ": is a directory, not a program file");
  if (!S_ISREG(st.st_mode))
    throw ProgramError(path + ": is " + fileKind(st.st_mode) +
                       ", not a regular file (a program is read from one)");
  if (expect >= 0 && int64_t(st.st_size) != expect)
    throw ProgramError(path + ": " + std::to_string(st.st_size) +
                       " bytes, the index says " + std::to_string(expect) +
                       " (a file from another compile, or truncated?)");
}

// stat() of a program file, checked as above without opening it.
struct stat statProgramFile(const std::string &path, int64_t expect) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  checkProgramFile(path, st, expect);
  return st;
}

class Loader {
public:
  Loader(std::string source, int worldSize)
      : source_(std::move(source)), worldSize_(worldSize) {}

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
  [[noreturn]] void fail(const JsonPath &where, const std::string &what) const {
    throw ProgramError(source_ + ": " + (where.empty() ? "" : where.str() + ": ") + what);
  }

  static std::string str(std::string_view s) { return std::string(s); }

  const json &require(const json &obj, std::string_view key,
                      const JsonPath &where) const {
    auto it = obj.find(str(key));
    if (it == obj.end())
      fail(where, "missing field '" + str(key) + "'");
    return *it;
  }

  void checkObject(const json &v, const JsonPath &where) const {
    if (!v.is_object())
      fail(where, "expected an object, got " + describeValue(v));
  }
  void checkArray(const json &v, const JsonPath &where) const {
    if (!v.is_array())
      fail(where, "expected an array, got " + describeValue(v));
  }

  // Refuses fields not in `allowed`; `context` ends the message.
  template <size_t N>
  void checkFields(const json &obj, const JsonPath &where,
                   const std::string_view (&allowed)[N], const char *context = "") const {
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (std::find(std::begin(allowed), std::end(allowed), it.key()) == std::end(allowed))
        fail(where, "unknown field '" + it.key() + "'" + context);
  }

  // An integer in [lo, hi).
  int64_t toInt(const json &v, const JsonPath &where, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer())
      fail(where, "expected an integer, got " + describeValue(v));
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(where, shortDump(v) + " is too large");
    int64_t x = v.get<int64_t>();
    if (hi == kNoUpperBound) {
      if (x < lo)
        fail(where, std::to_string(x) + " must be at least " + std::to_string(lo));
    } else if (x < lo || x >= hi) {
      fail(where, std::to_string(x) + " is out of range [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + ")");
    }
    return x;
  }

  int64_t intField(const json &obj, std::string_view key, const JsonPath &where,
                   int64_t lo, int64_t hi) const {
    return toInt(require(obj, key, where), where.key(key), lo, hi);
  }

  double toNumber(const json &v, const JsonPath &where) const {
    if (!v.is_number())
      fail(where, "expected a number, got " + describeValue(v));
    double x = v.get<double>();
    if (!(x >= 0))
      fail(where, shortDump(v) + " must be non-negative");
    return x;
  }

  void loadTop(const json &doc, Program &p, bool index);
  void checkTopFields(const json &doc, bool index) const;
  void loadRankFiles(const json &doc, Program &p);
  void loadCollectiveGroups(const json &doc, Program &p);
  void checkOwners(const Program &p, const JsonPath &where, const std::string &list) const;
  void fillScanValues(Program &p, const RankProgram &rp) const;
  void checkVersion(const json &doc) const;
  void checkSize(const Program &p, int64_t computeOps, const std::string &why) const;
  void loadCost(const json &doc, Program &p) const;
  void loadStageGraph(const json &doc, Program &p) const;
  void loadLayers(const json &doc, Program &p) const;
  void loadTies(const json &doc, Program &p) const;
  void loadRank(const json &v, const JsonPath &where, int index, Program &p);
  void loadOwns(const json &owns, const JsonPath &where, const Program &p,
                RankProgram &rp) const;
  Op loadOp(const json &v, const JsonPath &where, int rank, bool inGroup, Program &p,
            RankProgram &rp);
  struct OpFields;
  OpKind readOpFields(const json &v, bool inGroup, OpFields &f) const;
  int64_t intOf(const OpFields &f, schema::Field field, int64_t lo, int64_t hi) const;
  void loadJob(const OpFields &f, const Program &p, RankProgram &rp, Op &op) const;
  void loadTransfer(const OpFields &f, int rank, const Program &p, Op &op) const;
  void loadCollective(const OpFields &f, int rank, Program &p, Op &op);
  void loadGroup(const OpFields &f, int rank, Program &p, RankProgram &rp, Op &op);
  void loadTensors(const json *reads, const json *writes, const JsonPath &where,
                   const Program &p, RankProgram &rp, Op &op) const;
  int64_t loadTensorList(const json &v, const JsonPath &where, const Program &p) const;
  int internGroup(const json &v, const JsonPath &where, int caller, Program &p);

  std::string source_; // the file being read: prefixed to every message
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

Program Loader::load(const json &doc) {
  using namespace schema::top;
  Program p;
  loadTop(doc, p, /*index=*/false);
  const JsonPath top;
  const json &ranks = require(doc, kRanks, top);
  checkArray(ranks, top.key(kRanks));
  if (ranks.size() != size_t(p.workers))
    fail(top.key(kRanks), "has " + std::to_string(ranks.size()) +
                              " entries, expected one per worker (" +
                              std::to_string(p.workers) + ")");
  p.ranks.resize(size_t(p.workers));
  for (int r = 0; r < p.workers; ++r)
    loadRank(ranks[size_t(r)], top.key(kRanks).index(r), r, p);
  checkOwners(p, top.key(kRanks), str(kRanks) + "[i]." + str(schema::rank::kOwns));
  return p;
}

Program Loader::loadIndex(const json &doc, const std::string &dir) {
  Program p;
  indexSource_ = source_;
  dir_ = dir;
  loadTop(doc, p, /*index=*/true);
  loadCollectiveGroups(doc, p);
  checkOwners(p, JsonPath().key(schema::layout::kRankFiles),
              str(schema::layout::kRankFiles) + "[i]." + str(schema::layout::kOwns));
  return p;
}

// Everything but the ranks, shared by a single document and an index.
void Loader::loadTop(const json &doc, Program &p, bool index) {
  using namespace schema::top;
  const JsonPath top;
  checkObject(doc, top);
  p.source = source_;

  const json &format = require(doc, kFormatField, top);
  if (!format.is_string() || format.get_ref<const std::string &>() != schema::kFormat)
    fail(top.key(kFormatField),
         "expected \"" + str(schema::kFormat) + "\", got " + shortDump(format));
  checkVersion(doc);
  checkTopFields(doc, index);

  p.workers = int(intField(doc, kWorkers, top, 1, kMaxInt));
  if (worldSize_ >= 0 && p.workers != worldSize_)
    fail(top, "the program is for " + std::to_string(p.workers) +
                  " ranks, launched with " + std::to_string(worldSize_));
  p.stages = int(intField(doc, kStages, top, 1, kMaxInt));
  p.microbatches = int(intField(doc, kMicrobatches, top, 1, kMaxInt));

  const json &split = require(doc, kSplitBackward, top);
  if (!split.is_boolean())
    fail(top.key(kSplitBackward), "expected a boolean, got " + describeValue(split));
  p.splitBackward = split.get<bool>();

  // What bounds the jobs before anything of their number is allocated: the
  // compute ops of a single document; the rank files' sizes of an index
  // (the ops are not read yet).
  int64_t computeOps = 0;
  std::string holds;
  if (index) {
    loadRankFiles(doc, p);
    int64_t bytes = 0;
    for (const RankFile &f : files_)
      bytes += f.bytes; // each below 2^48: no overflow
    computeOps = bytes / kMinComputeOpBytes;
    holds = "the rank files (" + std::to_string(bytes) + " bytes in all) hold at most " +
            std::to_string(computeOps);
  } else {
    computeOps = countComputeOps(doc);
    holds = "the file has " + std::to_string(computeOps);
  }
  if (auto scan = doc.find(str(kScanTensors)); scan != doc.end()) {
    // Each is written by one compute op: bounded by their count.
    p.scanTensors = toInt(*scan, top.key(kScanTensors), 0,
                          std::min<int64_t>(computeOps, kMaxInt));
  }
  checkSize(p, computeOps, holds);
  loadStageGraph(doc, p);
  loadTies(doc, p);
  loadCost(doc, p);
  loadLayers(doc, p);
  // Ticks, as the compiler writes them: an integer below 2^53 (a double
  // holds it exactly; --profile's prediction error divides by it).
  constexpr int64_t kMaxTicks = int64_t(1) << 53;
  p.makespan = double(toInt(require(doc, kMakespan, top), top.key(kMakespan),
                            0, kMaxTicks));
  if (auto replayed = doc.find(str(kReplayedMakespan)); replayed != doc.end())
    p.replayedMakespan =
        double(toInt(*replayed, top.key(kReplayedMakespan), 0, kMaxTicks));
}

// A single document has the schema's top-level fields; an index the same
// but `ranks`, plus the layout's.
void Loader::checkTopFields(const json &doc, bool index) const {
  namespace layout = schema::layout;
  const std::string_view layoutFields[] = {layout::kLayout, layout::kRankFiles,
                                           layout::kCollectiveGroups};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string &key = it.key();
    const bool isLayout = std::find(std::begin(layoutFields), std::end(layoutFields), key) !=
                          std::end(layoutFields);
    const bool isTop =
        std::find(std::begin(schema::top::kAll), std::end(schema::top::kAll), key) !=
        std::end(schema::top::kAll);
    if (!index && isLayout)
      fail(JsonPath(), "'" + key + "' belongs to a per-rank index (" + indexNames() +
                           " in the program's directory), not to a single document");
    if (index && key == schema::top::kRanks)
      fail(JsonPath(), "a per-rank index has no '" + key +
                           "' (each rank's program is in its rank file)");
    if (!isLayout && !isTop)
      fail(JsonPath(), "unknown field '" + key + "' at the top level");
  }
  if (!index)
    return;
  const json &value = require(doc, layout::kLayout, JsonPath());
  if (!value.is_string() || value.get_ref<const std::string &>() != layout::kPerRank)
    fail(JsonPath().key(layout::kLayout),
         "expected \"" + str(layout::kPerRank) + "\", got " + shortDump(value));
}

// rank_files: one entry per worker, in rank order.
void Loader::loadRankFiles(const json &doc, Program &p) {
  namespace layout = schema::layout;
  const JsonPath where = JsonPath().key(layout::kRankFiles);
  const json &list = require(doc, layout::kRankFiles, JsonPath());
  checkArray(list, where);
  if (list.size() != size_t(p.workers))
    fail(where, "has " + std::to_string(list.size()) +
                    " entries, expected one per worker (" + std::to_string(p.workers) + ")");
  static constexpr std::string_view kFields[] = {layout::kRank, layout::kOwns,
                                                 layout::kFile, layout::kBytes,
                                                 layout::kCrc32};
  p.ranks.resize(size_t(p.workers));
  files_.resize(size_t(p.workers));
  for (int r = 0; r < p.workers; ++r) {
    const JsonPath at = where.index(r);
    const json &e = list[size_t(r)];
    checkObject(e, at);
    checkFields(e, at, kFields);
    int64_t rank = intField(e, layout::kRank, at, 0, kNoUpperBound);
    if (rank != r)
      fail(at.key(layout::kRank), "expected " + std::to_string(r) + ", got " +
                                      std::to_string(rank) +
                                      " (ranks must be listed in order)");
    RankProgram &rp = p.ranks[size_t(r)];
    rp.rank = r;
    loadOwns(require(e, layout::kOwns, at), at.key(layout::kOwns), p, rp);
    RankFile &f = files_[size_t(r)];
    f.owns = rp.owns;
    const json &file = require(e, layout::kFile, at);
    if (!file.is_string())
      fail(at.key(layout::kFile), "expected a string, got " + describeValue(file));
    f.name = file.get<std::string>();
    // A name inside the directory, nothing that leaves it.
    if (f.name.empty() || f.name == "." || f.name == ".." ||
        f.name.find('/') != std::string::npos || f.name.find('\0') != std::string::npos)
      fail(at.key(layout::kFile), shortDump(file) +
                                      " is not a plain file name (no '/', not '.' or '..')");
    f.bytes = intField(e, layout::kBytes, at, 0, int64_t(1) << 48);
    f.crc32 = uint32_t(intField(e, layout::kCrc32, at, 0, int64_t(1) << 32));
    // The sizes bound the program before any of it is allocated, so each
    // is checked against its file now, by every rank (the rank files must
    // all be visible: one shared directory); the CRC-32 only by the rank
    // that reads the file.
    (void)statProgramFile(dir_ + "/" + f.name, f.bytes);
  }
}

// collective_groups: the distinct member lists of all collective ops, in
// the writer's order; Program::groups is exactly this list, so that every
// rank creates the same communicators in the same order (transport.cpp).
void Loader::loadCollectiveGroups(const json &doc, Program &p) {
  const JsonPath where = JsonPath().key(schema::layout::kCollectiveGroups);
  const json &list = require(doc, schema::layout::kCollectiveGroups, JsonPath());
  checkArray(list, where);
  for (size_t g = 0; g < list.size(); ++g) {
    const JsonPath at = where.index(int64_t(g));
    const json &members = list[g];
    if (!members.is_array())
      fail(at, "expected an array of ranks, got " + describeValue(members));
    if (members.empty())
      fail(at, "is empty");
    std::vector<int> ranks;
    for (size_t i = 0; i < members.size(); ++i) {
      int r = int(toInt(members[i], at.index(int64_t(i)), 0, p.workers));
      if (!ranks.empty() && r <= ranks.back())
        fail(at.index(int64_t(i)), "ranks must be sorted and distinct, got " +
                                       std::to_string(r) + " after " +
                                       std::to_string(ranks.back()));
      ranks.push_back(r);
    }
    auto [it, fresh] = groupIndex_.emplace(ranks, int(g));
    if (!fresh)
      fail(at, listString(ranks) + " is listed twice (first at " +
                   str(schema::layout::kCollectiveGroups) + "[" +
                   std::to_string(it->second) + "])");
    p.groups.push_back(std::move(ranks));
  }
  fixedGroups_ = true;
  groupUsed_.assign(p.groups.size(), 0);
}

// Every stage needs an owner to initialize and keep its weights.
void Loader::checkOwners(const Program &p, const JsonPath &where,
                         const std::string &list) const {
  std::vector<char> owned(size_t(p.stages), 0);
  for (const RankProgram &rp : p.ranks)
    for (int s : rp.owns)
      owned[size_t(s)] = 1;
  for (int s = 0; s < p.stages; ++s)
    if (!owned[size_t(s)])
      fail(where, "stage " + std::to_string(s) + " has no owner (no " + list +
                      " lists it)");
}

void Loader::checkGroupsUsed() const {
  for (size_t g = 0; g < groupUsed_.size(); ++g)
    if (!groupUsed_[g])
      throw ProgramError(indexSource_ + ": " +
                         JsonPath().key(schema::layout::kCollectiveGroups).index(int64_t(g)).str() +
                         ": no collective op of any rank has these members");
}

void Loader::checkVersion(const json &doc) const {
  const JsonPath where = JsonPath().key(schema::top::kVersion);
  int64_t version = toInt(require(doc, schema::top::kVersion, JsonPath()), where, 0,
                          kNoUpperBound);
  if (version == schema::kVersion)
    return;
  const std::string want = std::to_string(schema::kVersion);
  fail(where, "this file is format version " + std::to_string(version) +
                  "; this pipeline-run reads version " + want +
                  (version < schema::kVersion
                       ? " (recompile it with pipeline-compile)"
                       : " (it needs a newer pipeline-run)"));
}

// Every forward and backward runs exactly once, so stages x microbatches
// cannot exceed the compute ops in the file: checked before anything of
// that size is allocated (a file claiming 2^31 stages is refused at once).
// The slack lets the validator name a missing job precisely.
void Loader::checkSize(const Program &p, int64_t computeOps, const std::string &holds) const {
  const int64_t jobs = int64_t(p.stages) * p.microbatches;
  const int64_t directions = p.splitBackward && !p.scanned() ? 3 : 2;
  const int64_t limit = computeOps + 1024;
  if (jobs > limit || jobs * directions > limit)
    fail(JsonPath(), std::to_string(p.stages) + " stages x " +
                         std::to_string(p.microbatches) + " microbatches make " +
                         std::to_string(jobs) + " jobs per direction, but " + holds +
                         " compute ops (every forward and backward runs exactly once)");
}

void Loader::loadStageGraph(const json &doc, Program &p) const {
  const JsonPath where = JsonPath().key(schema::top::kStageGraph);
  const json &g = require(doc, schema::top::kStageGraph, JsonPath());
  checkArray(g, where);
  std::vector<std::pair<int, int>> edges;
  edges.reserve(g.size());
  std::unordered_map<uint64_t, size_t> seen;
  for (size_t i = 0; i < g.size(); ++i) {
    const JsonPath at = where.index(int64_t(i));
    const json &e = g[i];
    if (!e.is_array() || e.size() != 2)
      fail(at, "expected an edge [src, dst], got " + describeValue(e));
    int src = int(toInt(e[0], at.index(0), 0, p.stages));
    int dst = int(toInt(e[1], at.index(1), 0, p.stages));
    auto edge = [&] { // only for messages
      return "edge [" + std::to_string(src) + ", " + std::to_string(dst) + "]";
    };
    if (src >= dst)
      fail(at, edge() + " must go from a lower to a higher stage (src < dst)");
    auto [it, fresh] = seen.emplace(uint64_t(src) << 32 | uint64_t(dst), i);
    if (!fresh)
      fail(at, edge() + " is listed twice (first at stage_graph[" +
                   std::to_string(it->second) + "])");
    edges.emplace_back(src, dst);
  }
  p.graph = StageGraph(p.stages, std::move(edges));
}

// Optional (schema::top::kOptional): one count in [1, kMaxStageLayers] per
// stage.
void Loader::loadLayers(const json &doc, Program &p) const {
  auto it = doc.find(str(schema::top::kLayers));
  if (it == doc.end())
    return;
  const JsonPath where = JsonPath().key(schema::top::kLayers);
  checkArray(*it, where);
  if (it->size() != size_t(p.stages))
    fail(where, "lists " + std::to_string(it->size()) + " layer counts for " +
                    std::to_string(p.stages) + " stages");
  for (size_t s = 0; s < it->size(); ++s)
    p.layers.push_back(
        toInt((*it)[s], where.index(int64_t(s)), 1, schema::kMaxStageLayers + 1));
}

// Optional `tied`: groups of at least two distinct stages, no stage in two.
void Loader::loadTies(const json &doc, Program &p) const {
  p.tieOf.assign(size_t(p.stages), -1);
  auto it = doc.find(str(schema::top::kTied));
  if (it == doc.end())
    return;
  const JsonPath where = JsonPath().key(schema::top::kTied);
  checkArray(*it, where);
  for (size_t g = 0; g < it->size(); ++g) {
    const JsonPath at = where.index(int64_t(g));
    const json &group = (*it)[g];
    checkArray(group, at);
    if (group.size() < 2)
      fail(at, "a tied group needs at least two stages, got " + describeValue(group));
    std::vector<int> stages;
    for (size_t i = 0; i < group.size(); ++i) {
      int s = int(toInt(group[i], at.index(int64_t(i)), 0, p.stages));
      int &tie = p.tieOf[size_t(s)];
      if (tie == int(g))
        fail(at.index(int64_t(i)), "stage " + std::to_string(s) + " is listed twice");
      if (tie >= 0)
        fail(at.index(int64_t(i)), "stage " + std::to_string(s) +
                                       " is already tied in tied[" +
                                       std::to_string(tie) + "]");
      tie = int(g);
      stages.push_back(s);
    }
    p.ties.push_back(std::move(stages));
  }
}

void Loader::loadCost(const json &doc, Program &p) const {
  using namespace schema::cost;
  const JsonPath where = JsonPath().key(schema::top::kCost);
  const json &c = require(doc, schema::top::kCost, JsonPath());
  checkObject(c, where);
  checkFields(c, where, kAll);
  auto durations = [&](std::string_view key, std::vector<double> &out) {
    const JsonPath at = where.key(key);
    const json &a = require(c, key, where);
    checkArray(a, at);
    if (a.size() != size_t(p.stages))
      fail(at, "lists " + std::to_string(a.size()) + " durations for " +
                   std::to_string(p.stages) + " stages");
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(toNumber(a[i], at.index(int64_t(i))));
  };
  durations(kFwd, p.cost.fwd);
  durations(kBwd, p.cost.bwd);
  durations(kBwdW, p.cost.bwdW);
  p.cost.actBytes = intField(c, kActBytes, where, 0, kNoUpperBound);
  p.cost.weightBytes = intField(c, kWeightBytes, where, 0, kNoUpperBound);
  // Optional (schema::cost::kOptional): older writers leave them out.
  auto optional = [&](std::string_view key, int64_t &out) {
    if (auto it = c.find(str(key)); it != c.end())
      out = toInt(*it, where.key(key), 0, kNoUpperBound);
  };
  optional(kTickNs, p.cost.tickNs);
  optional(kTransfer, p.cost.transfer);
}

// `where`: ranks[index] in a single document, the root of a rank file.
void Loader::loadRank(const json &v, const JsonPath &where, int index, Program &p) {
  using namespace schema::rank;
  checkObject(v, where);
  checkFields(v, where, kAll);
  RankProgram &rp = p.ranks[size_t(index)];
  int64_t rank = intField(v, kRank, where, 0, kNoUpperBound);
  if (rank != index)
    fail(where.key(kRank), "expected " + std::to_string(index) + ", got " +
                               std::to_string(rank) +
                               (where.empty() ? " (the index gives this file to rank " +
                                                    std::to_string(index) + ")"
                                              : std::string(" (ranks must be listed in order)")));
  rp.rank = index;
  loadOwns(require(v, kOwns, where), where.key(kOwns), p, rp);

  const json &ops = require(v, kOps, where);
  const JsonPath opsAt = where.key(kOps);
  checkArray(ops, opsAt);
  if (ops.size() > size_t(kMaxInt))
    fail(opsAt, "has more than 2^31 ops");
  rp.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    rp.ops.push_back(loadOp(ops[i], opsAt.index(int64_t(i)), index, false, p, rp));
}

void Loader::loadOwns(const json &owns, const JsonPath &where, const Program &p,
                      RankProgram &rp) const {
  checkArray(owns, where);
  for (size_t i = 0; i < owns.size(); ++i)
    rp.owns.push_back(int(toInt(owns[i], where.index(int64_t(i)), 0, p.stages)));
  rp.ownsSorted = rp.owns;
  std::sort(rp.ownsSorted.begin(), rp.ownsSorted.end());
  auto twice = std::adjacent_find(rp.ownsSorted.begin(), rp.ownsSorted.end());
  if (twice == rp.ownsSorted.end())
    return;
  // Name the second listing.
  size_t second = 0;
  for (size_t i = 0, seen = 0; i < rp.owns.size(); ++i)
    if (rp.owns[i] == *twice && seen++ == 1)
      second = i;
  fail(where.index(int64_t(second)),
       "stage " + std::to_string(*twice) + " is listed twice");
}

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

Op Loader::loadOp(const json &v, const JsonPath &where, int rank, bool inGroup,
                  Program &p, RankProgram &rp) {
  OpFields f(where);
  Op op;
  op.kind = readOpFields(v, inGroup, f);
  if (f.has(schema::kStage))
    op.stage = int32_t(intOf(f, schema::kStage, 0, p.stages));
  switch (op.kind) {
  case OpKind::Combine:
  case OpKind::LossGrad:
  case OpKind::Jacobian:
  case OpKind::Forward:
  case OpKind::Backward:
  case OpKind::BackwardWeight:
    loadJob(f, p, rp, op);
    break;
  case OpKind::Send:
  case OpKind::Recv:
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    loadTransfer(f, rank, p, op);
    break;
  case OpKind::ReleaseWeights:
  case OpKind::OptimizerStep:
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
  case OpKind::TiedGrad:
    loadCollective(f, rank, p, op);
    break;
  case OpKind::Group:
    loadGroup(f, rank, p, rp, op);
    break;
  }
  return op;
}

// The op's name and fields: a known op, allowed where it is, with its
// required fields and no others.
OpKind Loader::readOpFields(const json &v, bool inGroup, OpFields &f) const {
  const JsonPath &where = f.where;
  checkObject(v, where);
  bool unknown = false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    int i = fieldIndex(it.key());
    if (i < 0) {
      unknown = true;
      continue;
    }
    f.fields[i] = &it.value();
    f.present |= 1u << i;
  }
  const json *name = f.fields[0];
  if (!name)
    fail(where, "missing field 'op'");
  if (!name->is_string())
    fail(where.key("op"), "expected a string, got " + describeValue(*name));
  const std::string &opText = name->get_ref<const std::string &>();
  f.name = opText;
  std::optional<OpKind> kind = schema::opKindNamed(opText);
  if (!kind)
    fail(where.key("op"), "unknown op '" + opText + "'");
  const schema::OpSchema &spec = schema::opSchema(*kind);
  if (inGroup && !isPointToPoint(*kind))
    fail(where, "'" + opText + "' cannot appear in a group (only send, recv, "
                "send_weights and fetch_weights can)");
  if (unknown || (f.present & ~spec.allowed()))
    for (auto it = v.begin(); it != v.end(); ++it) { // the first, in key order
      int i = fieldIndex(it.key());
      if (i < 0 || !(spec.allowed() >> i & 1u))
        fail(where, "unknown field '" + it.key() + "' for op '" + opText + "'");
    }
  for (int i = 0; i < schema::kNumFields; ++i)
    if ((spec.required >> i & 1u) && !(f.present >> i & 1u))
      fail(where, "missing field '" + str(schema::kFieldNames[i]) + "'");
  return *kind;
}

int64_t Loader::intOf(const OpFields &f, schema::Field field, int64_t lo, int64_t hi) const {
  return toInt(f.field(field), f.at(field), lo, hi);
}

// A job: its microbatch, simulated times and tensors; the scan's jobs need
// a scanned program, a weight half a split or scanned backward.
void Loader::loadJob(const OpFields &f, const Program &p, RankProgram &rp, Op &op) const {
  const std::string opText(f.name);
  if (op.kind == OpKind::Combine) {
    const json &product = f.field(schema::kProduct);
    const std::string text = product.is_string() ? product.get<std::string>() : "";
    op.product = text == program::productName(program::ScanValue::Vector)
                     ? program::ScanValue::Vector
                 : text == program::productName(program::ScanValue::Matrix)
                     ? program::ScanValue::Matrix
                     : program::ScanValue::None;
    if (op.product == program::ScanValue::None)
      fail(f.at(schema::kProduct), "expected \"jv\" or \"jj\", got " + describeValue(product));
  }
  if (program::isScan(op.kind) && !p.scanned())
    fail(f.where, "'" + opText + "' needs \"scan_tensors\" (a scanned backward)");
  if (op.kind == OpKind::BackwardWeight && !p.splitBackward && !p.scanned())
    fail(f.where, "backward_weight needs \"split_backward\": true (or a scanned "
                  "backward's \"scan_tensors\")");
  op.microbatch = int32_t(intOf(f, schema::kMicrobatch, 0, p.microbatches));
  // Simulated times: present once the schedule was simulated.
  if (f.has(schema::kStart))
    op.start = toNumber(f.field(schema::kStart), f.at(schema::kStart));
  if (f.has(schema::kEnd))
    op.end = toNumber(f.field(schema::kEnd), f.at(schema::kEnd));
  if (f.has(schema::kStart) && f.has(schema::kEnd) && op.end < op.start)
    fail(f.at(schema::kEnd), "ends before its start");
  loadTensors(&f.field(schema::kReads), &f.field(schema::kWrites), f.where, p, rp, op);
}

// A transfer: an activation's or gradient's send or receive names its
// tensor, whose (s, b) it takes; every transfer has a peer, a tag, a size.
void Loader::loadTransfer(const OpFields &f, int rank, const Program &p, Op &op) const {
  if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
    const schema::Field tensor = op.kind == OpKind::Send ? schema::kReads : schema::kWrites;
    op.tensor = loadTensorList(f.field(tensor), f.at(tensor), p);
    if (!p.isScanTensor(op.tensor)) { // a scan tensor has no (s, b) of its own
      program::TensorRef t = program::tensorOf(op.tensor, p.microbatches);
      op.stage = int32_t(t.stage);
      op.microbatch = int32_t(t.microbatch);
    }
  }
  op.peer = int32_t(intOf(f, schema::kPeer, 0, p.workers));
  if (op.peer == rank)
    fail(f.at(schema::kPeer), std::to_string(op.peer) + " is the rank itself");
  op.tag = intOf(f, schema::kTag, 0, kMaxInt + 1);
  op.bytes = intOf(f, schema::kBytes, 0, kNoUpperBound);
}

// A collective: its members (interned as a group), its size, and a
// reduce's root among the members or a tied reduction's tie.
void Loader::loadCollective(const OpFields &f, int rank, Program &p, Op &op) {
  if (op.kind == OpKind::ReduceGrad)
    op.root = int32_t(intOf(f, schema::kRoot, 0, p.workers));
  if (op.kind == OpKind::TiedGrad) {
    if (p.ties.empty())
      fail(f.at(schema::kTie), "the program ties no stages (it has no 'tied')");
    op.tie = int32_t(intOf(f, schema::kTie, 0, int64_t(p.ties.size())));
  }
  op.group = internGroup(f.field(schema::kMembers), f.at(schema::kMembers), rank, p);
  op.bytes = intOf(f, schema::kBytes, 0, kNoUpperBound);
  const std::vector<int> &members = p.groups[size_t(op.group)];
  if (op.kind == OpKind::ReduceGrad &&
      !std::binary_search(members.begin(), members.end(), op.root))
    fail(f.at(schema::kRoot), "rank " + std::to_string(op.root) +
                                  " is not in the members " + listString(members));
}

// A group: its transfers, loaded in order into the rank's children (groups
// do not nest, so a group's children are contiguous).
void Loader::loadGroup(const OpFields &f, int rank, Program &p, RankProgram &rp, Op &op) {
  const json &ops = f.field(schema::kOps);
  const JsonPath opsAt = f.at(schema::kOps);
  checkArray(ops, opsAt);
  if (rp.children.size() + ops.size() > size_t(kMaxInt))
    fail(opsAt, "the rank's groups hold more than 2^31 ops");
  op.first = uint32_t(rp.children.size());
  op.count = uint32_t(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    Op child = loadOp(ops[i], opsAt.index(int64_t(i)), rank, true, p, rp);
    rp.children.push_back(child);
  }
}

// A send's reads or a receive's writes: exactly one tensor id.
int64_t Loader::loadTensorList(const json &v, const JsonPath &where,
                               const Program &p) const {
  checkArray(v, where);
  if (v.size() != 1)
    fail(where, "lists " + std::to_string(v.size()) +
                    " tensors; a send or receive moves exactly one");
  return toInt(v[0], where.index(0), 0, p.tensorCount());
}

// A compute op's reads and writes: ids in range, then exactly the roles of
// the stage graph (roles.h).
void Loader::loadTensors(const json *reads, const json *writes, const JsonPath &where,
                         const Program &p, RankProgram &rp, Op &op) const {
  const JsonPath readsAt = where.key(schema::fieldName(schema::kReads));
  const JsonPath writesAt = where.key(schema::fieldName(schema::kWrites));
  checkArray(*reads, readsAt);
  checkArray(*writes, writesAt);
  if (rp.tensorIds.size() + reads->size() + writes->size() > size_t(UINT32_MAX))
    fail(where, "the rank's ops list more than 2^32 tensors");
  op.first = uint32_t(rp.tensorIds.size());
  op.count = uint32_t(reads->size());
  op.writes = uint32_t(writes->size());
  const int64_t ids = p.tensorCount();
  for (size_t i = 0; i < reads->size(); ++i)
    rp.tensorIds.push_back(toInt((*reads)[i], readsAt.index(int64_t(i)), 0, ids));
  for (size_t i = 0; i < writes->size(); ++i)
    rp.tensorIds.push_back(toInt((*writes)[i], writesAt.index(int64_t(i)), 0, ids));
  auto listed = [](IdList l) {
    std::string s = "[";
    for (uint32_t i = 0; i < l.size(); ++i)
      s += (i ? ", " : "") + std::to_string(l[i]);
    return s + "]";
  };
  if (!readsMatchRoles(p, op, rp.reads(op)))
    fail(readsAt, describe(p, op) + " reads " + listed(rp.reads(op)) + ", expected " +
                      expectedReads(p, op));
  if (!writesMatchRoles(p, op, rp.writes(op)))
    fail(writesAt, describe(p, op) + " writes " + listed(rp.writes(op)) +
                       ", expected " + expectedWrites(p, op));
}

int Loader::internGroup(const json &v, const JsonPath &where, int caller, Program &p) {
  if (!v.is_array())
    fail(where, "expected an array of ranks, got " + describeValue(v));
  if (v.empty())
    fail(where, "is empty");
  scratch_.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    const JsonPath at = where.index(int64_t(i));
    int r = int(toInt(v[i], at, 0, p.workers));
    if (!scratch_.empty() && r <= scratch_.back())
      fail(at, "ranks must be sorted and distinct, got " + std::to_string(r) +
                   " after " + std::to_string(scratch_.back()));
    scratch_.push_back(r);
  }
  if (!std::binary_search(scratch_.begin(), scratch_.end(), caller))
    fail(where, listString(scratch_) + " does not contain the calling rank " +
                    std::to_string(caller));
  auto it = groupIndex_.find(scratch_);
  if (it != groupIndex_.end()) {
    if (fixedGroups_)
      groupUsed_[size_t(it->second)] = 1;
    return it->second;
  }
  if (fixedGroups_) // a per-rank program lists every group in its index
    fail(where, listString(scratch_) + " is not one of the index's " +
                    str(schema::layout::kCollectiveGroups) + " (" + indexSource_ + ")");
  int index = int(p.groups.size());
  p.groups.push_back(scratch_);
  groupIndex_.emplace(scratch_, index);
  return index;
}

// Closes a descriptor when it leaves scope.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0)
      close(fd);
  }
};

// The whole file; `expect` >= 0 is the size the index gives it. The file
// is opened without blocking (a FIFO without a writer would block the open)
// and checked through the descriptor before anything is read, so what is
// read is what was checked: a regular file of the expected size, read once
// up to that size (a device or a pipe costs no memory).
std::string readFile(const std::string &path, int64_t expect = -1) {
  FileDescriptor file{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(file.fd, &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  checkProgramFile(path, st, expect);
  try {
    std::string text(size_t(st.st_size), '\0');
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = read(file.fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        throw ProgramError(path + ": read error: " + std::strerror(errno));
      if (n == 0)
        break; // shrank since fstat: the parser or the size check names it
      done += size_t(n);
    }
    text.resize(done);
    return text;
  } catch (const std::bad_alloc &) {
    throw ProgramError(path + ": out of memory while reading a file of " +
                       std::to_string((st.st_size + (1 << 20) - 1) >> 20) + " MiB");
  }
}

void Loader::loadRankFile(const std::string &dir, int r, Program &p) {
  const RankFile &f = files_[size_t(r)];
  source_ = dir + "/" + f.name;
  const std::string bytes = readFile(source_, f.bytes);
  if (int64_t(bytes.size()) != f.bytes) // a pipe, or a file that changed
    fail(JsonPath(), std::to_string(bytes.size()) + " bytes, the index says " +
                         std::to_string(f.bytes) + " (a file from another compile?)");
  const uint32_t crc = crc32Of(bytes);
  if (crc != f.crc32)
    fail(JsonPath(), "CRC-32 " + hex32(crc) + " differs from the index's " + hex32(f.crc32) +
                         " (a file from another compile?)");
  const json doc = decodeDocument(bytes, source_);
  RankProgram &rp = p.ranks[size_t(r)];
  rp.owns.clear();
  rp.ownsSorted.clear();
  loadRank(doc, JsonPath(), r, p);
  if (rp.owns != f.owns)
    fail(JsonPath().key(schema::rank::kOwns),
         listString(rp.owns) + " differs from the index's " +
             str(schema::layout::kRankFiles) + "[" + std::to_string(r) + "]." +
             str(schema::layout::kOwns) + " " + listString(f.owns));
  if (p.scanned())
    fillScanValues(p, rp);
}

// What each scan tensor of a scanned backward holds, a vector or a matrix,
// as far as rank rp's ops fix it: the validator fixes it from every rank's
// writers, but a run of one rank's file has only that rank's ops. Its
// writers and readers fix what it computes and reads, and so what it
// receives (each receive is read here).
void Loader::fillScanValues(Program &p, const RankProgram &rp) const {
  using program::ScanValue;
  p.scanValue.assign(size_t(p.scanTensors), ScanValue::None);
  auto fix = [&](int64_t id, ScanValue value, const JsonPath &where) {
    if (!p.isScanTensor(id))
      return;
    ScanValue &slot = p.scanValue[size_t(id - p.scanBase())];
    if (slot != ScanValue::None && slot != value)
      fail(where, describeTensor(p, id) + " is used both as a vector and as a matrix");
    slot = value;
  };
  const JsonPath ops = JsonPath().key(schema::rank::kOps);
  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    const JsonPath at = ops.index(int64_t(i));
    if (program::isScan(op.kind))
      fix(rp.writes(op)[0],
          op.kind == OpKind::LossGrad   ? ScanValue::Vector
          : op.kind == OpKind::Jacobian ? ScanValue::Matrix
                                        : op.product,
          at);
    if (op.kind == OpKind::Combine) {
      fix(rp.reads(op)[0], op.product, at);
      fix(rp.reads(op)[1], ScanValue::Matrix, at);
    } else if (op.kind == OpKind::BackwardWeight && rp.reads(op).size() > 0) {
      fix(rp.reads(op)[0], ScanValue::Vector, at);
    }
  }
  auto checkReceive = [&](const Op &op, const JsonPath &at) {
    if (op.kind == OpKind::Recv && p.isScanTensor(op.tensor) &&
        p.scanValue[size_t(op.tensor - p.scanBase())] == ScanValue::None)
      fail(at, "receives " + describeTensor(p, op.tensor) +
                   ", which no op of this rank reads (its size is unknown)");
  };
  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    checkReceive(op, ops.index(int64_t(i)));
    if (op.kind == OpKind::Group)
      for (uint32_t c = 0; c < op.count; ++c)
        checkReceive(rp.childrenOf(op)[c],
                     ops.index(int64_t(i)).key(schema::rank::kOps).index(c));
  }
}

// The index of a per-rank directory: "" when it has none; throws when it
// has both encodings' (which is the program?).
std::string indexIn(const std::string &dir) {
  std::string found;
  for (program::Encoding e : {program::Encoding::Json, program::Encoding::Cbor}) {
    const std::string name = indexName(e);
    struct stat st {};
    if (stat((dir + "/" + name).c_str(), &st) != 0)
      continue;
    if (!found.empty())
      throw ProgramError(dir + ": holds both " + found + " and " + name +
                         " (one program has one index: remove the stale one)");
    found = name;
  }
  return found;
}

bool isIndexName(const std::string &name) {
  for (program::Encoding e : {program::Encoding::Json, program::Encoding::Cbor})
    if (name == indexName(e))
      return true;
  return false;
}

// A per-rank program: its index (read already), then rank `rank`'s file
// (-1: every rank's).
Program loadPerRank(const std::string &dir, const std::string &indexPath,
                    const std::string &bytes, const json &index, int worldSize, int rank) {
  Loader loader(indexPath, worldSize);
  Program p = loader.loadIndex(index, dir);
  p.source = dir;
  p.perRank = true;
  p.crc32 = crc32Of(bytes);
  if (rank >= p.workers) // a run checks its world size first
    throw ProgramError(indexPath + ": the program is for " + std::to_string(p.workers) +
                       " ranks, not rank " + std::to_string(rank));
  if (rank >= 0) {
    p.onlyRank = rank;
    loader.loadRankFile(dir, rank, p);
    return p;
  }
  for (int r = 0; r < p.workers; ++r)
    loader.loadRankFile(dir, r, p);
  loader.checkGroupsUsed();
  return p;
}

} // namespace

Program parseProgram(const std::string &text, const std::string &source,
                     int worldSize) {
  json doc = decodeDocument(text, source);
  return Loader(source, worldSize).load(doc);
}

Program loadProgram(const std::string &path, int worldSize, int rank) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  std::string dir, file = path;
  if (S_ISDIR(st.st_mode)) {
    dir = path;
    while (dir.size() > 1 && dir.back() == '/')
      dir.pop_back();
    std::string index = indexIn(dir);
    if (index.empty())
      throw ProgramError(path + ": is a directory without " + indexNames() +
                         ", not a per-rank program");
    file = dir + "/" + index;
  }
  try {
    std::string bytes = readFile(file);
    json doc = decodeDocument(bytes, file);
    // What the file is decides, not its name: an index has `layout` (a
    // single document with one is refused by the loader).
    // A directory's index is loaded as one, whatever it holds (the loader
    // names what it lacks).
    const bool index = !dir.empty() ||
                       (doc.is_object() && doc.contains(std::string(schema::layout::kLayout)) &&
                        !doc.contains(std::string(schema::top::kRanks)));
    if (!index) {
      Program p = Loader(path, worldSize).load(doc);
      p.crc32 = crc32Of(bytes);
      return p;
    }
    if (dir.empty()) { // the index file itself names its directory
      const size_t slash = path.rfind('/');
      dir = slash == std::string::npos ? "." : path.substr(0, slash);
      if (isIndexName(path.substr(slash == std::string::npos ? 0 : slash + 1)))
        (void)indexIn(dir); // refuses a directory holding both indexes
    }
    return loadPerRank(dir, file, bytes, doc, worldSize, rank);
  } catch (const std::bad_alloc &) {
    // The JSON document takes ~10x the file's size in memory.
    throw ProgramError(file + ": out of memory while loading a file of " +
                       std::to_string((st.st_size + (1 << 20) - 1) >> 20) + " MiB");
  }
}

} // namespace pipesched::runtime
