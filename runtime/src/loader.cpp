#include "loader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace pipesched::runtime {
namespace {

using json = nlohmann::json;

constexpr int64_t kNoUpperBound = std::numeric_limits<int64_t>::max();

// Hash of a rank list, to intern collective groups in O(size).
struct GroupHash {
  size_t operator()(const std::vector<int> &g) const {
    uint64_t h = 1469598103934665603ull;
    for (int x : g)
      h = (h ^ uint64_t(uint32_t(x))) * 1099511628211ull;
    return size_t(h);
  }
};

std::string shortDump(const json &v) {
  std::string s = v.dump();
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return s;
}

std::string describeValue(const json &v) {
  return std::string(v.type_name()) + " " + shortDump(v);
}

// The fields each op kind takes ("op" included).
struct OpSpec {
  const char *name;
  OpKind kind;
  std::vector<const char *> fields;
};

const std::vector<OpSpec> &opSpecs() {
  static const std::vector<OpSpec> specs = {
      {"forward", OpKind::Forward, {"op", "stage", "microbatch", "start", "end"}},
      {"backward", OpKind::Backward, {"op", "stage", "microbatch", "start", "end"}},
      {"backward_weight", OpKind::BackwardWeight,
       {"op", "stage", "microbatch", "start", "end"}},
      {"send", OpKind::Send,
       {"op", "kind", "stage", "microbatch", "peer", "tag", "bytes"}},
      {"recv", OpKind::Recv,
       {"op", "kind", "stage", "microbatch", "peer", "tag", "bytes"}},
      {"send_weights", OpKind::SendWeights, {"op", "stage", "peer", "tag", "bytes"}},
      {"fetch_weights", OpKind::FetchWeights, {"op", "stage", "peer", "tag", "bytes"}},
      {"release_weights", OpKind::ReleaseWeights, {"op", "stage"}},
      {"allreduce_grad", OpKind::AllreduceGrad, {"op", "stage", "group"}},
      {"reduce_grad", OpKind::ReduceGrad, {"op", "stage", "root", "group"}},
      {"optimizer_step", OpKind::OptimizerStep, {"op", "stage"}},
      {"group", OpKind::Group, {"op", "ops"}},
  };
  return specs;
}

class Loader {
public:
  Loader(const std::string &source, int worldSize)
      : source_(source), worldSize_(worldSize) {}

  Program load(const json &doc);

private:
  [[noreturn]] void fail(const std::string &where, const std::string &what) const {
    throw ProgramError(source_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  static std::string field(const std::string &where, const char *key) {
    return where.empty() ? key : where + "." + key;
  }

  const json &require(const json &obj, const char *key,
                      const std::string &where) const {
    auto it = obj.find(key);
    if (it == obj.end())
      fail(where, std::string("missing field '") + key + "'");
    return *it;
  }

  void checkObject(const json &v, const std::string &where) const {
    if (!v.is_object())
      fail(where, "expected an object, got " + describeValue(v));
  }

  // `context` ends the message: " for op 'send'", " at the top level".
  void checkFields(const json &obj, const std::string &where,
                   const std::vector<const char *> &allowed,
                   const char *context = "", const char *opName = nullptr) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char *a) {
        return it.key() == a;
      });
      if (!known)
        fail(where, "unknown field '" + it.key() + "'" + context +
                        (opName ? std::string(" for op '") + opName + "'" : ""));
    }
  }

  // An integer in [lo, hi).
  int64_t toInt(const json &v, const std::string &where, int64_t lo,
                int64_t hi) const {
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

  int64_t intField(const json &obj, const char *key, const std::string &where,
                   int64_t lo, int64_t hi) const {
    return toInt(require(obj, key, where), field(where, key), lo, hi);
  }

  double numberField(const json &obj, const char *key,
                     const std::string &where) const {
    const json &v = require(obj, key, where);
    if (!v.is_number())
      fail(field(where, key), "expected a number, got " + describeValue(v));
    double x = v.get<double>();
    if (!(x >= 0))
      fail(field(where, key), shortDump(v) + " must be non-negative");
    return x;
  }

  void loadCost(const json &doc, Program &p) const;
  void loadStageGraph(const json &doc, Program &p) const;
  void loadRank(const json &v, int index, Program &p);
  Op loadOp(const json &v, const OpRef &ref, bool inGroup, Program &p,
            RankProgram &rp);
  int internGroup(const json &v, const std::string &where, int caller,
                  Program &p);

  const std::string &source_;
  int worldSize_;
  std::unordered_map<std::vector<int>, int, GroupHash> groupIndex_;
  std::vector<int> scratch_;
};

Program Loader::load(const json &doc) {
  checkObject(doc, "");
  Program p;
  p.source = source_;

  const json &format = require(doc, "format", "");
  if (!format.is_string() || format.get<std::string>() != "pipesched-program")
    fail("format", "expected \"pipesched-program\", got " + shortDump(format));
  int64_t version = toInt(require(doc, "version", ""), "version", 0, kNoUpperBound);
  if (version != 1)
    fail("version", "unsupported version " + std::to_string(version) +
                        " (this runtime reads version 1)");
  checkFields(doc, "",
              {"format", "version", "stages", "microbatches", "workers",
               "stage_graph", "split_backward", "cost", "makespan", "ranks"},
              " at the top level");

  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  p.workers = int(intField(doc, "workers", "", 1, kMaxInt));
  if (worldSize_ >= 0 && p.workers != worldSize_)
    fail("", "the program is for " + std::to_string(p.workers) +
                 " ranks, launched with " + std::to_string(worldSize_));
  p.stages = int(intField(doc, "stages", "", 1, kMaxInt));
  p.microbatches = int(intField(doc, "microbatches", "", 1, kMaxInt));

  const json &split = require(doc, "split_backward", "");
  if (!split.is_boolean())
    fail("split_backward", "expected a boolean, got " + describeValue(split));
  p.splitBackward = split.get<bool>();

  loadStageGraph(doc, p);
  loadCost(doc, p);
  p.makespan = numberField(doc, "makespan", "");

  const json &ranks = require(doc, "ranks", "");
  if (!ranks.is_array())
    fail("ranks", "expected an array, got " + describeValue(ranks));
  if (ranks.size() != size_t(p.workers))
    fail("ranks", "has " + std::to_string(ranks.size()) +
                      " entries, expected one per worker (" +
                      std::to_string(p.workers) + ")");
  p.ranks.resize(p.workers);
  for (int r = 0; r < p.workers; ++r)
    loadRank(ranks[r], r, p);

  // Every stage needs an owner to initialize and keep its weights.
  std::vector<char> owned(p.stages, 0);
  for (const RankProgram &rp : p.ranks)
    for (int s : rp.owns)
      owned[s] = 1;
  for (int s = 0; s < p.stages; ++s)
    if (!owned[s])
      fail("ranks", "stage " + std::to_string(s) +
                        " has no owner (no ranks[i].owns lists it)");
  return p;
}

void Loader::loadStageGraph(const json &doc, Program &p) const {
  const json &g = require(doc, "stage_graph", "");
  if (!g.is_array())
    fail("stage_graph", "expected an array, got " + describeValue(g));
  std::vector<char> seen(p.stages, 0);
  for (size_t i = 0; i < g.size(); ++i) {
    std::string where = "stage_graph[" + std::to_string(i) + "]";
    const json &e = g[i];
    if (!e.is_array() || e.size() != 2)
      fail(where, "expected an edge [src, dst], got " + describeValue(e));
    int src = int(toInt(e[0], where + "[0]", 0, p.stages));
    int dst = int(toInt(e[1], where + "[1]", 0, p.stages));
    // An explicit chain is the same model as the empty list; anything else
    // (fan-in, fan-out, skips) would need a DAG-aware executor.
    if (dst != src + 1 || seen[src])
      fail(where, "pipeline-run supports only chain stage graphs "
                  "(0 -> 1 -> ... -> S-1); edge [" + std::to_string(src) +
                      ", " + std::to_string(dst) + "] is not part of the chain");
    seen[src] = 1;
    p.stageGraph.emplace_back(src, dst);
  }
  if (!g.empty() && g.size() != size_t(p.stages - 1))
    fail("stage_graph", "pipeline-run supports only chain stage graphs "
                        "(0 -> 1 -> ... -> S-1); the list has " +
                            std::to_string(g.size()) + " of its " +
                            std::to_string(p.stages - 1) + " edges");
}

void Loader::loadCost(const json &doc, Program &p) const {
  const json &c = require(doc, "cost", "");
  checkObject(c, "cost");
  checkFields(c, "cost", {"fwd", "bwd", "bwd_w", "act_bytes", "weight_bytes"});
  auto durations = [&](const char *key, std::vector<double> &out) {
    const json &a = require(c, key, "cost");
    std::string where = std::string("cost.") + key;
    if (!a.is_array())
      fail(where, "expected an array, got " + describeValue(a));
    if (a.size() != size_t(p.stages))
      fail(where, "lists " + std::to_string(a.size()) + " durations for " +
                      std::to_string(p.stages) + " stages");
    for (size_t i = 0; i < a.size(); ++i) {
      std::string w = where + "[" + std::to_string(i) + "]";
      if (!a[i].is_number())
        fail(w, "expected a number, got " + describeValue(a[i]));
      double x = a[i].get<double>();
      if (!(x >= 0))
        fail(w, shortDump(a[i]) + " must be non-negative");
      out.push_back(x);
    }
  };
  durations("fwd", p.cost.fwd);
  durations("bwd", p.cost.bwd);
  durations("bwd_w", p.cost.bwdW);
  p.cost.actBytes = intField(c, "act_bytes", "cost", 0, kNoUpperBound);
  p.cost.weightBytes = intField(c, "weight_bytes", "cost", 0, kNoUpperBound);
}

void Loader::loadRank(const json &v, int index, Program &p) {
  std::string where = "ranks[" + std::to_string(index) + "]";
  checkObject(v, where);
  checkFields(v, where, {"rank", "owns", "ops"});
  RankProgram &rp = p.ranks[index];
  int64_t rank = toInt(require(v, "rank", where), where + ".rank", 0, kNoUpperBound);
  if (rank != index)
    fail(where + ".rank", "expected " + std::to_string(index) + ", got " +
                              std::to_string(rank) + " (ranks must be listed in order)");
  rp.rank = index;

  const json &owns = require(v, "owns", where);
  if (!owns.is_array())
    fail(where + ".owns", "expected an array, got " + describeValue(owns));
  rp.ownsMask.assign(p.stages, 0);
  for (size_t i = 0; i < owns.size(); ++i) {
    std::string w = where + ".owns[" + std::to_string(i) + "]";
    int s = int(toInt(owns[i], w, 0, p.stages));
    if (rp.ownsMask[s])
      fail(w, "stage " + std::to_string(s) + " is listed twice");
    rp.ownsMask[s] = 1;
    rp.owns.push_back(s);
  }

  const json &ops = require(v, "ops", where);
  if (!ops.is_array())
    fail(where + ".ops", "expected an array, got " + describeValue(ops));
  rp.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    OpRef ref{int32_t(index), int32_t(i), -1};
    rp.ops.push_back(loadOp(ops[i], ref, false, p, rp));
  }
}

Op Loader::loadOp(const json &v, const OpRef &ref, bool inGroup, Program &p,
                  RankProgram &rp) {
  std::string where = ref.str();
  checkObject(v, where);
  const json &name = require(v, "op", where);
  if (!name.is_string())
    fail(where + ".op", "expected a string, got " + describeValue(name));
  const std::string &opName_ = name.get_ref<const std::string &>();
  const OpSpec *spec = nullptr;
  for (const OpSpec &s : opSpecs())
    if (opName_ == s.name)
      spec = &s;
  if (!spec)
    fail(where + ".op", "unknown op '" + opName_ + "'");
  checkFields(v, where, spec->fields, "", spec->name);

  Op op;
  op.kind = spec->kind;
  if (inGroup && !isP2P(op.kind))
    fail(where, "'" + opName_ + "' cannot appear in a group (only send, recv, "
                "send_weights and fetch_weights can)");

  const int W = p.workers;
  if (op.kind != OpKind::Group)
    op.stage = int32_t(intField(v, "stage", where, 0, p.stages));

  switch (op.kind) {
  case OpKind::Forward:
  case OpKind::Backward:
  case OpKind::BackwardWeight:
    if (op.kind == OpKind::BackwardWeight && !p.splitBackward)
      fail(where, "backward_weight needs \"split_backward\": true");
    op.microbatch = int32_t(intField(v, "microbatch", where, 0, p.microbatches));
    // Simulated times: present once the schedule was simulated.
    if (v.contains("start"))
      op.start = numberField(v, "start", where);
    if (v.contains("end"))
      op.end = numberField(v, "end", where);
    if (v.contains("start") && v.contains("end") && op.end < op.start)
      fail(where + ".end", "ends before its start");
    break;
  case OpKind::Send:
  case OpKind::Recv: {
    const json &kind = require(v, "kind", where);
    if (!kind.is_string())
      fail(where + ".kind", "expected a string, got " + describeValue(kind));
    const std::string &k = kind.get_ref<const std::string &>();
    if (k == "act")
      op.tensor = TensorKind::Act;
    else if (k == "grad")
      op.tensor = TensorKind::Grad;
    else
      fail(where + ".kind", "unknown kind '" + k + "' (expected 'act' or 'grad')");
    op.microbatch = int32_t(intField(v, "microbatch", where, 0, p.microbatches));
  }
    [[fallthrough]];
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    op.peer = int32_t(intField(v, "peer", where, 0, W));
    if (op.peer == ref.rank)
      fail(where + ".peer", std::to_string(op.peer) + " is the rank itself");
    op.tag = intField(v, "tag", where, 0, int64_t(std::numeric_limits<int32_t>::max()) + 1);
    op.bytes = intField(v, "bytes", where, 0, kNoUpperBound);
    break;
  case OpKind::ReleaseWeights:
  case OpKind::OptimizerStep:
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
    if (op.kind == OpKind::ReduceGrad)
      op.root = int32_t(intField(v, "root", where, 0, W));
    op.group = internGroup(require(v, "group", where), where + ".group",
                           ref.rank, p);
    if (op.kind == OpKind::ReduceGrad &&
        !std::binary_search(p.groups[op.group].begin(), p.groups[op.group].end(),
                            op.root))
      fail(where + ".root", "rank " + std::to_string(op.root) +
                                " is not in the group " +
                                groupString(p.groups[op.group]));
    break;
  case OpKind::Group: {
    const json &ops = require(v, "ops", where);
    if (!ops.is_array())
      fail(where + ".ops", "expected an array, got " + describeValue(ops));
    // Children are appended after any earlier group's: contiguous, since
    // groups do not nest.
    std::vector<Op> children;
    children.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      OpRef child = ref;
      child.child = int32_t(i);
      children.push_back(loadOp(ops[i], child, true, p, rp));
    }
    op.firstChild = uint32_t(rp.children.size());
    op.numChildren = uint32_t(children.size());
    rp.children.insert(rp.children.end(), children.begin(), children.end());
    break;
  }
  }
  return op;
}

int Loader::internGroup(const json &v, const std::string &where, int caller,
                        Program &p) {
  if (!v.is_array())
    fail(where, "expected an array of ranks, got " + describeValue(v));
  if (v.empty())
    fail(where, "is empty");
  scratch_.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    std::string w = where + "[" + std::to_string(i) + "]";
    int r = int(toInt(v[i], w, 0, p.workers));
    if (!scratch_.empty() && r <= scratch_.back())
      fail(w, "ranks must be sorted and distinct, got " + std::to_string(r) +
                  " after " + std::to_string(scratch_.back()));
    scratch_.push_back(r);
  }
  if (!std::binary_search(scratch_.begin(), scratch_.end(), caller))
    fail(where, groupString(scratch_) + " does not contain the calling rank " +
                    std::to_string(caller));
  auto it = groupIndex_.find(scratch_);
  if (it != groupIndex_.end())
    return it->second;
  int index = int(p.groups.size());
  p.groups.push_back(scratch_);
  groupIndex_.emplace(scratch_, index);
  return index;
}

} // namespace

Program parseProgram(const std::string &text, const std::string &source,
                     int worldSize) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error &e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3,
    // column 5: ..."; keep the part after the prefix and add the byte offset.
    std::string what = e.what();
    const std::string marker = "parse error ";
    size_t at = what.find(marker);
    if (at != std::string::npos)
      what = what.substr(at + marker.size());
    throw ProgramError(source + ": invalid JSON " + what + " (byte " +
                       std::to_string(e.byte) + ")");
  }
  return Loader(source, worldSize).load(doc);
}

Program loadProgram(const std::string &path, int worldSize) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ProgramError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw ProgramError(path + ": read error: " + std::strerror(errno));
  return parseProgram(text.str(), path, worldSize);
}

} // namespace pipesched::runtime
