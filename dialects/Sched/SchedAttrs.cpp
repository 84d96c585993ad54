//===- SchedAttrs.cpp - sched dialect attributes --------------------------===//

#include "pipesched/Dialect/Sched/SchedDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;
using namespace pipesched::sched;

#include "pipesched/Dialect/Sched/SchedAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "pipesched/Dialect/Sched/SchedAttrs.cpp.inc"

Attribute SchedDialect::parseAttribute(DialectAsmParser &parser,
                                       Type type) const {
  // `1f1b` lexes as the integer 1 followed by the keyword `f1b`.
  SMLoc loc = parser.getCurrentLocation();
  int64_t leading;
  OptionalParseResult number = parser.parseOptionalInteger(leading);
  if (number.has_value()) {
    if (succeeded(*number) && leading == 1 &&
        succeeded(parser.parseOptionalKeyword("f1b")))
      return OneFOneBAttr::get(getContext());
    parser.emitError(loc, "unknown sched attribute (the only one that starts "
                          "with a digit is '1f1b')");
    return {};
  }
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult result =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (result.has_value())
    return attr;
  parser.emitError(loc) << "unknown sched attribute '" << mnemonic << "'";
  return {};
}

void SchedDialect::printAttribute(Attribute attr,
                                  DialectAsmPrinter &printer) const {
  if (failed(generatedAttributePrinter(attr, printer)))
    llvm_unreachable("every sched attribute has a printer");
}

void SchedDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pipesched/Dialect/Sched/SchedAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// CostAttr
//===----------------------------------------------------------------------===//

static constexpr int64_t kDefaultFwd = 1, kDefaultBwd = 2;

CostAttr CostAttr::getDefault(MLIRContext *ctx) {
  return CostAttr::get(ctx, {kDefaultFwd}, {kDefaultBwd}, {}, 0, 0, {}, 0, 0,
                       0, 0, {}, 0, /*actWBytes=*/-1);
}

int64_t CostAttr::getDuration(int64_t stage, Direction d) const {
  if (d == Direction::Scan)
    return 0; // a scan job carries its own duration
  ArrayRef<int64_t> values = d == Direction::Forward    ? getFwd()
                             : d == Direction::Backward ? getBwd()
                                                        : getBwdWeight();
  if (values.empty())
    return 0;
  return values.size() == 1 ? values.front() : values[stage];
}

int64_t CostAttr::getOverlapDuration(int64_t forwardStage,
                                     int64_t backwardStage) const {
  ArrayRef<int64_t> pair = getFwdBwd();
  if (!pair.empty())
    return pair.size() == 1 ? pair.front() : pair[forwardStage];
  return getDuration(forwardStage, Direction::Forward) +
         getDuration(backwardStage, Direction::Backward) +
         getDuration(backwardStage, Direction::BackwardWeight);
}

LogicalResult CostAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> fwd, ArrayRef<int64_t> bwd,
                               ArrayRef<int64_t> bwdWeight, int64_t actBytes,
                               int64_t weightBytes, ArrayRef<int64_t> fwdBwd,
                               int64_t transfer, int64_t tickNs,
                               int64_t latency, int64_t bandwidth,
                               ArrayRef<int64_t> optimizer, int64_t reduce,
                               int64_t actWBytes) {
  auto checkDurations = [&](StringRef key, ArrayRef<int64_t> values,
                            bool mayBeEmpty) -> LogicalResult {
    if (values.empty() && !mayBeEmpty)
      return emitError() << "cost '" << key << "' needs at least one value";
    for (int64_t v : values)
      if (v < 0)
        return emitError() << "cost '" << key
                           << "' has a negative duration " << v;
    return success();
  };
  if (failed(checkDurations("fwd", fwd, false)) ||
      failed(checkDurations("bwd", bwd, false)) ||
      failed(checkDurations("bwd_w", bwdWeight, true)) ||
      failed(checkDurations("fwd_bwd", fwdBwd, true)) ||
      failed(checkDurations("optimizer", optimizer, true)))
    return failure();
  if (actBytes < 0 || weightBytes < 0)
    return emitError() << "cost sizes must be non-negative";
  if (actWBytes >= 0 && bwdWeight.empty())
    return emitError() << "cost 'act_w' (what the weight half keeps of the "
                          "activation) needs a split backward: give 'bwd_w'";
  if (actWBytes > actBytes)
    return emitError() << "cost 'act_w' = " << actWBytes
                       << " exceeds 'act' = " << actBytes
                       << ": the weight half keeps a part of the activation";
  if (actWBytes < -1)
    return emitError() << "cost sizes must be non-negative";
  if (transfer < 0)
    return emitError() << "cost 'transfer' has a negative duration "
                       << transfer;
  if (latency < 0)
    return emitError() << "cost 'latency' has a negative duration " << latency;
  if (reduce < 0)
    return emitError() << "cost 'reduce' has a negative duration " << reduce;
  if (bandwidth < 0)
    return emitError() << "cost 'bandwidth' must be positive";
  if (bandwidth > 0 && tickNs == 0)
    return emitError() << "cost 'bandwidth' (bytes per second) needs a "
                          "'unit' for its ticks";
  if (tickNs != 0 && tickNs != 1 && tickNs != 1000 && tickNs != 1000000)
    return emitError() << "cost 'unit' must be ns, us or ms (a tick of "
                       << tickNs << " ns)";
  return success();
}

/// Parses `N` or `[N, N, ...]`.
static ParseResult parseScalarOrList(AsmParser &p,
                                     SmallVectorImpl<int64_t> &values) {
  values.clear();
  if (succeeded(p.parseOptionalLSquare())) {
    if (succeeded(p.parseOptionalRSquare()))
      return success();
    do {
      if (p.parseInteger(values.emplace_back()))
        return failure();
    } while (succeeded(p.parseOptionalComma()));
    return p.parseRSquare();
  }
  return p.parseInteger(values.emplace_back());
}

namespace {
/// The parameters of a cost as the parser fills them, with their defaults.
struct CostFields {
  SmallVector<int64_t> fwd{kDefaultFwd}, bwd{kDefaultBwd}, bwdWeight, fwdBwd,
      optimizer;
  int64_t actBytes = 0, weightBytes = 0, transfer = 0, tickNs = 0,
          latency = 0, bandwidth = 0, reduce = 0, actWBytes = -1;

  CostAttr build(AsmParser &p) const {
    return CostAttr::getChecked([&] { return p.emitError(p.getNameLoc()); },
                                p.getContext(), fwd, bwd, bwdWeight, actBytes,
                                weightBytes, fwdBwd, transfer, tickNs, latency,
                                bandwidth, optimizer, reduce, actWBytes);
  }
};
} // namespace

/// Parses `unit = ns|us|ms` into the tick length in nanoseconds.
static ParseResult parseTimeUnit(AsmParser &p, int64_t &tickNs) {
  StringRef unit;
  SMLoc unitLoc = p.getCurrentLocation();
  if (p.parseKeyword(&unit))
    return failure();
  tickNs = llvm::StringSwitch<int64_t>(unit)
               .Case("ns", 1)
               .Case("us", 1000)
               .Case("ms", 1000000)
               .Default(0);
  if (!tickNs)
    return p.emitError(unitLoc) << "unknown time unit '" << unit
                                << "' (expected ns, us or ms)";
  return success();
}

/// Parses the value of cost key `key` into `f`.
static ParseResult parseCostValue(AsmParser &p, StringRef key, SMLoc keyLoc,
                                  CostFields &f) {
  if (key == "fwd" || key == "bwd" || key == "bwd_w" || key == "fwd_bwd" ||
      key == "optimizer")
    return parseScalarOrList(p, key == "fwd"       ? f.fwd
                                : key == "bwd"     ? f.bwd
                                : key == "bwd_w"   ? f.bwdWeight
                                : key == "fwd_bwd" ? f.fwdBwd
                                                   : f.optimizer);
  if (key == "unit")
    return parseTimeUnit(p, f.tickNs);
  int64_t *scalar = llvm::StringSwitch<int64_t *>(key)
                        .Case("act", &f.actBytes)
                        .Case("act_w", &f.actWBytes)
                        .Case("weights", &f.weightBytes)
                        .Case("transfer", &f.transfer)
                        .Case("latency", &f.latency)
                        .Case("bandwidth", &f.bandwidth)
                        .Case("reduce", &f.reduce)
                        .Default(nullptr);
  if (!scalar)
    return p.emitError(keyLoc)
           << "unknown cost key '" << key
           << "' (expected fwd, bwd, bwd_w, fwd_bwd, act, act_w, weights, "
              "optimizer, transfer, latency, bandwidth, reduce or unit)";
  return p.parseInteger(*scalar);
}

Attribute CostAttr::parse(AsmParser &p, Type) {
  CostFields fields;
  llvm::SmallDenseSet<StringRef> seen;
  if (p.parseLess())
    return {};
  if (succeeded(p.parseOptionalGreater()))
    return fields.build(p);
  do {
    StringRef key;
    SMLoc keyLoc = p.getCurrentLocation();
    if (p.parseKeyword(&key) || p.parseEqual())
      return {};
    if (!seen.insert(key).second) {
      p.emitError(keyLoc) << "cost key '" << key << "' appears twice";
      return {};
    }
    if (failed(parseCostValue(p, key, keyLoc, fields)))
      return {};
  } while (succeeded(p.parseOptionalComma()));
  if (p.parseGreater())
    return {};
  return fields.build(p);
}

/// The keyword of a tick length the parser accepts.
static StringRef timeUnitName(int64_t tickNs) {
  switch (tickNs) {
  case 1:
    return "ns";
  case 1000:
    return "us";
  default:
    return "ms";
  }
}

static void printScalarOrList(AsmPrinter &p, ArrayRef<int64_t> values) {
  if (values.size() == 1) {
    p << values.front();
    return;
  }
  p << '[';
  llvm::interleaveComma(values, p);
  p << ']';
}

void CostAttr::print(AsmPrinter &p) const {
  p << "<fwd = ";
  printScalarOrList(p, getFwd());
  p << ", bwd = ";
  printScalarOrList(p, getBwd());
  if (isSplitBackward()) {
    p << ", bwd_w = ";
    printScalarOrList(p, getBwdWeight());
  }
  if (!getFwdBwd().empty()) {
    p << ", fwd_bwd = ";
    printScalarOrList(p, getFwdBwd());
  }
  if (getActBytes())
    p << ", act = " << getActBytes();
  if (getActWBytes() >= 0)
    p << ", act_w = " << getActWBytes();
  if (getWeightBytes())
    p << ", weights = " << getWeightBytes();
  if (!getOptimizer().empty()) {
    p << ", optimizer = ";
    printScalarOrList(p, getOptimizer());
  }
  if (getTransfer())
    p << ", transfer = " << getTransfer();
  if (getLatency())
    p << ", latency = " << getLatency();
  if (getBandwidth())
    p << ", bandwidth = " << getBandwidth();
  if (getReduce())
    p << ", reduce = " << getReduce();
  if (hasTimeUnit())
    p << ", unit = " << timeUnitName(getTickNs());
  p << '>';
}

//===----------------------------------------------------------------------===//
// StageGraphAttr
//===----------------------------------------------------------------------===//

LogicalResult
StageGraphAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> sources, ArrayRef<int64_t> targets) {
  if (sources.size() != targets.size())
    return emitError() << "stage graph needs as many sources as targets";
  llvm::SmallDenseSet<std::pair<int64_t, int64_t>> seen;
  for (auto [src, dst] : llvm::zip(sources, targets)) {
    if (src < 0 || src >= dst)
      return emitError() << "stage graph edge " << src << " -> " << dst
                         << " must go from a lower to a higher stage";
    if (!seen.insert({src, dst}).second)
      return emitError() << "stage graph edge " << src << " -> " << dst
                         << " appears twice";
  }
  return success();
}

Attribute StageGraphAttr::parse(AsmParser &p, Type) {
  SmallVector<int64_t> sources, targets;
  if (p.parseLess())
    return {};
  if (failed(p.parseOptionalGreater())) {
    do {
      if (p.parseInteger(sources.emplace_back()) || p.parseArrow() ||
          p.parseInteger(targets.emplace_back()))
        return {};
    } while (succeeded(p.parseOptionalComma()));
    if (p.parseGreater())
      return {};
  }
  return StageGraphAttr::getChecked(
      [&] { return p.emitError(p.getNameLoc()); }, p.getContext(), sources,
      targets);
}

void StageGraphAttr::print(AsmPrinter &p) const {
  p << '<';
  llvm::interleaveComma(llvm::zip(getSources(), getTargets()), p,
                        [&](auto edge) {
                          p << std::get<0>(edge) << " -> " << std::get<1>(edge);
                        });
  p << '>';
}

//===----------------------------------------------------------------------===//
// TiedAttr
//===----------------------------------------------------------------------===//

SmallVector<ArrayRef<int64_t>> TiedAttr::getGroups() const {
  SmallVector<ArrayRef<int64_t>> groups;
  ArrayRef<int64_t> stages = getStages();
  for (int64_t size : getSizes()) {
    groups.push_back(stages.take_front(size));
    stages = stages.drop_front(size);
  }
  return groups;
}

LogicalResult TiedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> stages,
                               ArrayRef<int64_t> sizes) {
  int64_t total = 0;
  for (int64_t size : sizes)
    total += size < 0 ? 0 : size;
  if (total != static_cast<int64_t>(stages.size()))
    return emitError() << "tied groups list " << stages.size()
                       << " stages, their sizes add up to " << total;
  // Stage -> the group it was first seen in. A std::map: any stage number
  // may come here, DenseMap's reserved keys (2^63 - 1, 2^63 - 2) too.
  std::map<int64_t, size_t> groupOf;
  size_t begin = 0;
  for (auto [g, size] : llvm::enumerate(sizes)) {
    if (size < 2)
      return emitError() << "tied group " << g << " has " << size
                         << " stage" << (size == 1 ? "" : "s")
                         << ": a tie needs at least two stages";
    ArrayRef<int64_t> group = stages.slice(begin, size);
    begin += size;
    for (int64_t s : group) {
      if (s < 0)
        return emitError() << "tied group " << g << " names stage " << s
                           << ", which is negative";
      auto [it, inserted] = groupOf.try_emplace(s, g);
      if (inserted)
        continue;
      if (it->second == g)
        return emitError() << "tied group " << g << " lists stage " << s
                           << " twice";
      return emitError() << "stage " << s << " is tied in groups "
                         << it->second << " and " << g
                         << ": a stage shares at most one weight";
    }
  }
  return success();
}

Attribute TiedAttr::parse(AsmParser &p, Type) {
  SmallVector<int64_t> stages, sizes;
  if (p.parseLess())
    return {};
  do {
    int64_t before = stages.size();
    if (p.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
          return p.parseInteger(stages.emplace_back());
        }))
      return {};
    sizes.push_back(int64_t(stages.size()) - before);
  } while (succeeded(p.parseOptionalComma()));
  if (p.parseGreater())
    return {};
  return TiedAttr::getChecked([&] { return p.emitError(p.getNameLoc()); },
                              p.getContext(), stages, sizes);
}

void TiedAttr::print(AsmPrinter &p) const {
  p << '<';
  llvm::interleaveComma(getGroups(), p, [&](ArrayRef<int64_t> group) {
    p << '[';
    llvm::interleaveComma(group, p);
    p << ']';
  });
  p << '>';
}

//===----------------------------------------------------------------------===//
// MemoryCapAttr
//===----------------------------------------------------------------------===//

LogicalResult
MemoryCapAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> limits, bool) {
  for (int64_t limit : limits)
    if (limit < 1)
      return emitError() << "memory cap must be at least 1, got " << limit;
  return success();
}

SmallVector<int64_t> MemoryCapAttr::perWorker(int64_t workers) const {
  if (isNone())
    return {};
  if (getLimits().size() == 1)
    return SmallVector<int64_t>(workers, getLimits().front());
  return SmallVector<int64_t>(getLimits());
}

LogicalResult NodesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t size, ArrayRef<int64_t> map,
                                int64_t transfer, int64_t latency,
                                int64_t bandwidth) {
  if ((size > 0) == !map.empty())
    return emitError() << "nodes needs either 'size' or 'map'";
  if (size < 0 || llvm::any_of(map, [](int64_t n) { return n < 0; }))
    return emitError() << "nodes: a size or node index must not be negative";
  if (transfer < -1 || latency < -1 || bandwidth < -1 || bandwidth == 0)
    return emitError() << "nodes: transfer and latency must not be "
                          "negative, bandwidth must be positive";
  return success();
}

std::vector<int64_t> NodesAttr::nodeOfWorkers(int64_t workers) const {
  if (!getMap().empty())
    return std::vector<int64_t>(getMap().begin(), getMap().end());
  std::vector<int64_t> nodes;
  for (int64_t w = 0; w < workers; ++w)
    nodes.push_back(w / getSize());
  return nodes;
}

/// One `key = value` entry of a `#sched.nodes`.
static ParseResult parseNodesEntry(AsmParser &p, StringRef key, int64_t &size,
                                   SmallVectorImpl<int64_t> &map,
                                   int64_t (&link)[3]) {
  if (key == "map")
    return parseScalarOrList(p, map);
  int64_t *field = key == "size"        ? &size
                   : key == "transfer"  ? &link[0]
                   : key == "latency"   ? &link[1]
                   : key == "bandwidth" ? &link[2]
                                        : nullptr;
  if (!field)
    return p.emitError(p.getCurrentLocation())
           << "expected 'size', 'map', 'transfer', 'latency' or "
              "'bandwidth', got '"
           << key << "'";
  return p.parseInteger(*field);
}

Attribute NodesAttr::parse(AsmParser &p, Type) {
  int64_t size = 0, link[3] = {-1, -1, -1};
  SmallVector<int64_t> map;
  if (p.parseLess())
    return {};
  do {
    StringRef key;
    if (p.parseKeyword(&key) || p.parseEqual() ||
        parseNodesEntry(p, key, size, map, link))
      return {};
  } while (succeeded(p.parseOptionalComma()));
  if (p.parseGreater())
    return {};
  return getChecked([&] { return p.emitError(p.getNameLoc()); },
                    p.getContext(), size, map, link[0], link[1], link[2]);
}

void NodesAttr::print(AsmPrinter &p) const {
  p << '<';
  if (getMap().empty()) {
    p << "size = " << getSize();
  } else {
    p << "map = [";
    llvm::interleaveComma(getMap(), p);
    p << ']';
  }
  for (auto [key, value] : {std::pair<StringRef, int64_t>{"transfer", getTransfer()},
                            {"latency", getLatency()},
                            {"bandwidth", getBandwidth()}})
    if (value >= 0)
      p << ", " << key << " = " << value;
  p << '>';
}

Attribute MemoryCapAttr::parse(AsmParser &p, Type) {
  SmallVector<int64_t> limits;
  bool inBytes = false;
  StringRef key;
  SMLoc loc = p.getCurrentLocation();
  if (p.parseLess() || p.parseKeyword(&key))
    return {};
  if (key == "units" || key == "bytes") {
    inBytes = key == "bytes";
    if (p.parseEqual() || parseScalarOrList(p, limits))
      return {};
    if (limits.empty()) {
      p.emitError(loc, "memory cap needs at least one value (or 'none')");
      return {};
    }
  } else if (key != "none") {
    p.emitError(loc) << "expected 'units', 'bytes' or 'none', got '" << key
                     << "'";
    return {};
  }
  if (p.parseGreater())
    return {};
  return getChecked([&] { return p.emitError(p.getNameLoc()); },
                    p.getContext(), limits, inBytes);
}

void MemoryCapAttr::print(AsmPrinter &p) const {
  if (isNone()) {
    p << "<none>";
    return;
  }
  p << '<' << (getInBytes() ? "bytes" : "units") << " = ";
  printScalarOrList(p, getLimits());
  p << '>';
}
