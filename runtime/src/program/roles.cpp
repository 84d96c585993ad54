#include "program/roles.h"

#include "pipesched/Program/Roles.h"

namespace pipesched::runtime {
namespace {

// A role any scan tensor fills (the writer numbers them in program order).
constexpr int64_t kAnyScan = program::kAnyScanTensor;

// Calls f(id) for each tensor the op should read (or write), in operand
// order: the schema's rule (pipesched/Program/Roles.h) on this stage graph.
template <class F> void forEachRole(const Program &p, const Op &op, bool reads, F &&f) {
  const StageGraph &g = p.graph;
  program::forEachRole(op.kind, p.scanned(), reads, op.stage, op.microbatch,
                       p.microbatches, g.predecessors(op.stage),
                       g.successors(op.stage), f);
}

bool matches(const Program &p, const Op &op, bool reads, IdList ids) {
  uint32_t k = 0;
  bool ok = true;
  forEachRole(p, op, reads, [&](int64_t id) {
    ok = ok && k < ids.size() &&
         (id == kAnyScan ? p.isScanTensor(ids[k]) : ids[k] == id);
    ++k;
  });
  return ok && k == ids.size();
}

std::string stageList(const char *singular, const char *plural, StageList stages) {
  std::string s = stages.size() == 1 ? singular : plural;
  for (size_t i = 0; i < stages.size(); ++i)
    s += (i ? ", " : " ") + std::to_string(stages[i]);
  return s;
}

std::string idList(const Program &p, const Op &op, bool reads) {
  std::string s = "[";
  forEachRole(p, op, reads, [&](int64_t id) {
    s += (s.size() > 1 ? ", " : "") + (id == kAnyScan ? "scan" : std::to_string(id));
  });
  return s + "]";
}

} // namespace

bool readsMatchRoles(const Program &p, const Op &op, IdList reads) {
  return matches(p, op, true, reads);
}

bool writesMatchRoles(const Program &p, const Op &op, IdList writes) {
  return matches(p, op, false, writes);
}

std::string expectedReads(const Program &p, const Op &op) {
  const StageGraph &g = p.graph;
  const int s = op.stage;
  const std::string mb = "microbatch " + std::to_string(op.microbatch);
  std::string why;
  if (op.kind == OpKind::LossGrad) {
    why = "its stage's output on " + mb;
  } else if (op.kind == OpKind::Combine) {
    why = "two scan tensors, the earlier part of the scan first";
  } else if (op.kind == OpKind::BackwardWeight && p.scanned()) {
    why = "the scan tensor holding its output's gradient, then " +
          stageList("the output of stage", "the outputs of stages", g.predecessors(s)) +
          " on " + mb;
  } else if (op.kind == OpKind::Forward || op.kind == OpKind::Jacobian) {
    if (g.predecessors(s).empty())
      why = "stage " + std::to_string(s) + " has no predecessor: it reads the " + mb +
            "'s data";
    else
      why = stageList("the output of stage", "the outputs of stages",
                      g.predecessors(s)) +
            " on " + mb;
  } else {
    why = g.isSink(s) ? "its own output, from which the loss gradient is computed"
                      : stageList("the input gradient of stage",
                                  "the input gradients of stages", g.successors(s));
    if (!g.predecessors(s).empty())
      why += ", then " + stageList("the output of stage", "the outputs of stages",
                                   g.predecessors(s));
    why += ", on " + mb;
  }
  return idList(p, op, true) + " (" + why + ")";
}

std::string expectedWrites(const Program &p, const Op &op) {
  std::string why;
  if (op.kind == OpKind::Forward)
    why = "its output";
  else if (program::isScan(op.kind))
    why = "one scan tensor";
  else if (op.kind == OpKind::BackwardWeight)
    why = "the weight gradient stays on the rank";
  else if (p.graph.predecessors(op.stage).empty())
    why = "stage " + std::to_string(op.stage) +
          " has no predecessor: there is no input gradient to write";
  else
    why = "its input gradient";
  return idList(p, op, false) + " (" + why + ")";
}

} // namespace pipesched::runtime
