#include "measure/measured_trace.h"

#include "pipesched/Program/TraceEvents.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace pipesched::runtime {
namespace {

char computeLetter(OpKind k, bool splitBackward) {
  switch (k) {
  case OpKind::Forward:
    return 'F';
  case OpKind::Backward:
    return splitBackward ? 'I' : 'B';
  case OpKind::BackwardWeight:
    return 'W';
  case OpKind::LossGrad:
    return 'G';
  case OpKind::Jacobian:
    return 'J';
  case OpKind::Combine:
    return 'C';
  default:
    return '?';
  }
}

// A transfer's name without its group: "send to 1", "fetch_weights 2".
std::string transferName(const Op &op) {
  std::string name(opName(op.kind));
  if (op.kind == OpKind::Send)
    return name + " to " + std::to_string(op.peer);
  if (op.kind == OpKind::Recv)
    return name + " from " + std::to_string(op.peer);
  return name + " " + std::to_string(op.stage);
}

// The fixed part of a packed TraceOp, then the name's bytes.
struct Packed {
  int64_t step, kind, startNs, endNs, stage, microbatch, bytes, peer, root, nameSize;
};

} // namespace

std::string traceName(const Program &program, const RankProgram &rp, const Op &op) {
  if (isCompute(op.kind))
    return std::to_string(op.stage) + computeLetter(op.kind, program.splitBackward) +
           std::to_string(op.microbatch);
  if (op.kind == OpKind::Group) {
    std::string s = "group (";
    for (uint32_t c = 0; c < op.count; ++c)
      s += (c ? "; " : "") + transferName(rp.childrenOf(op)[c]);
    return s + ")";
  }
  return transferName(op);
}

std::vector<TraceOp> traceOps(const Program &program, int rank,
                              const std::vector<OpTiming> &timeline) {
  const RankProgram &rp = program.ranks[size_t(rank)];
  std::vector<TraceOp> ops;
  ops.reserve(timeline.size());
  for (const OpTiming &timing : timeline) {
    const OpTiming t = clampedToStep(timing);
    const Op &op = rp.ops[size_t(t.op)];
    TraceOp e;
    e.kind = op.kind;
    e.step = t.step;
    e.startNs = t.startNs;
    e.endNs = t.endNs;
    e.stage = op.stage;
    e.microbatch = op.microbatch;
    e.name = traceName(program, rp, op);
    const uint32_t fields = program::opSchema(op.kind).allowed();
    if (fields & program::kBytes)
      e.bytes = op.bytes;
    if (fields & program::kPeer)
      e.peer = op.peer;
    if (op.kind == OpKind::ReduceGrad)
      e.root = op.root;
    if (op.kind == OpKind::Group) { // the sum of its transfers, their peer if one
      e.bytes = 0;
      for (uint32_t c = 0; c < op.count; ++c) {
        const Op &child = rp.childrenOf(op)[c];
        e.bytes += child.bytes;
        e.peer = c == 0 || e.peer == child.peer ? child.peer : -1;
      }
    }
    ops.push_back(std::move(e));
  }
  return ops;
}

std::string packTraceOps(const std::vector<TraceOp> &ops) {
  std::string out;
  for (const TraceOp &e : ops) {
    Packed p{e.step,  int64_t(e.kind), e.startNs, e.endNs, e.stage, e.microbatch,
             e.bytes, e.peer,          e.root,    int64_t(e.name.size())};
    out.append(reinterpret_cast<const char *>(&p), sizeof p);
    out += e.name;
  }
  return out;
}

std::vector<TraceOp> unpackTraceOps(const std::string &bytes) {
  std::vector<TraceOp> ops;
  size_t at = 0;
  while (at < bytes.size()) {
    Packed p;
    if (bytes.size() - at < sizeof p)
      throw std::runtime_error("a truncated trace record");
    std::memcpy(&p, bytes.data() + at, sizeof p);
    at += sizeof p;
    if (p.nameSize < 0 || size_t(p.nameSize) > bytes.size() - at ||
        p.kind < 0 || p.kind >= program::kNumOpKinds || p.step < 0 ||
        p.step > INT32_MAX)
      throw std::runtime_error("a malformed trace record");
    TraceOp e;
    e.kind = OpKind(p.kind);
    e.step = int32_t(p.step);
    e.startNs = p.startNs;
    e.endNs = p.endNs;
    e.stage = p.stage;
    e.microbatch = p.microbatch;
    e.bytes = p.bytes;
    e.peer = p.peer;
    e.root = p.root;
    e.name.assign(bytes, at, size_t(p.nameSize));
    at += size_t(p.nameSize);
    ops.push_back(std::move(e));
  }
  return ops;
}

std::string measuredTraceJson(const std::vector<std::vector<TraceOp>> &perRank) {
  // Step t's events start after the longest step t-1 of any rank.
  std::vector<int64_t> longest;
  for (const std::vector<TraceOp> &ops : perRank)
    for (const TraceOp &e : ops) {
      if (size_t(e.step) >= longest.size())
        longest.resize(size_t(e.step) + 1, 0);
      longest[size_t(e.step)] = std::max(longest[size_t(e.step)], e.endNs);
    }
  std::vector<int64_t> offset(longest.size(), 0);
  for (size_t t = 1; t < longest.size(); ++t)
    offset[t] = offset[t - 1] + longest[t - 1];

  std::string out;
  trace::TraceWriter writer(out, "measured", "ns");
  for (size_t r = 0; r < perRank.size(); ++r)
    writer.rank(int(r));
  for (size_t r = 0; r < perRank.size(); ++r)
    for (const TraceOp &e : perRank[r]) {
      const std::string_view category = opName(e.kind);
      writer.slice(int(r), isCompute(e.kind) ? trace::kCompute : trace::kCommunication,
                   e.name, category, double(offset[size_t(e.step)] + e.startNs) / 1e3,
                   double(e.endNs - e.startNs) / 1e3,
                   {{"step", e.step + 1},
                    {"stage", e.stage},
                    {"microbatch", e.microbatch},
                    {"bytes", e.bytes},
                    {"peer", e.peer},
                    {"root", e.root}});
    }
  writer.finish();
  return out;
}

} // namespace pipesched::runtime
