// The loader's top-level fields, shared by a single document and a
// per-rank index: format and version, the sizes that bound everything
// else, the simulated times and the cost model.
#include "program/loader_impl.h"

#include <algorithm>

namespace pipesched::runtime::loading {
namespace {

// The fewest bytes a compute op takes in a rank file (CBOR, the smaller
// encoding: {"op":"forward","stage":0,"microbatch":0,"reads":[],
// "writes":[0]} is 46 bytes): the index's file sizes bound the jobs.
constexpr int64_t kMinComputeOpBytes = 40;

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

} // namespace

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

} // namespace pipesched::runtime::loading
