// The in-memory form of a per-rank program (docs/program-format.md, version 1).
// Plain structs without JSON: the loader fills them, the validator checks them
// across ranks, the executor runs one rank's ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

enum class OpKind : uint8_t {
  Forward,
  Backward,
  BackwardWeight,
  Send,
  Recv,
  SendWeights,
  FetchWeights,
  ReleaseWeights,
  AllreduceGrad,
  ReduceGrad,
  OptimizerStep,
  Group,
};

enum class TensorKind : uint8_t { Act, Grad };

const char *opName(OpKind kind);
const char *tensorName(TensorKind kind);

inline bool isCompute(OpKind k) {
  return k == OpKind::Forward || k == OpKind::Backward ||
         k == OpKind::BackwardWeight;
}
inline bool isP2P(OpKind k) {
  return k == OpKind::Send || k == OpKind::Recv || k == OpKind::SendWeights ||
         k == OpKind::FetchWeights;
}
// Outgoing half of a point-to-point pair (send, send_weights).
inline bool isOutgoing(OpKind k) {
  return k == OpKind::Send || k == OpKind::SendWeights;
}
inline bool isCollective(OpKind k) {
  return k == OpKind::AllreduceGrad || k == OpKind::ReduceGrad;
}

// One op. Fields an op kind does not use keep their defaults. 64 bytes, so a
// program of 10^5 ops stays small.
struct Op {
  OpKind kind = OpKind::Forward;
  TensorKind tensor = TensorKind::Act; // send / recv
  int32_t stage = -1;
  int32_t microbatch = -1;
  int32_t peer = -1;  // p2p
  int32_t root = -1;  // reduce_grad
  int32_t group = -1; // collectives: index into Program::groups
  int64_t tag = -1;
  int64_t bytes = 0;  // from the compiler's cost model, checked not used
  double start = 0, end = 0; // simulated times (compute ops)
  uint32_t firstChild = 0, numChildren = 0; // group: RankProgram::children
};

struct RankProgram {
  int rank = 0;
  std::vector<int> owns;      // stages, as listed
  std::vector<char> ownsMask; // ownsMask[s] != 0 iff rank owns s
  std::vector<Op> ops;        // top level, in program order
  std::vector<Op> children;   // the ops of groups, in order

  bool ownsStage(int stage) const { return ownsMask[stage] != 0; }
  const Op *childrenOf(const Op &group) const {
    return children.data() + group.firstChild;
  }
};

struct Cost {
  std::vector<double> fwd, bwd, bwdW;
  int64_t actBytes = 0, weightBytes = 0;
};

struct Program {
  std::string source; // the file name, prefixed to every message
  int stages = 0, microbatches = 0, workers = 0;
  bool splitBackward = false;
  std::vector<std::pair<int, int>> stageGraph; // empty or the chain
  Cost cost;
  double makespan = 0;
  std::vector<std::vector<int>> groups; // distinct collective groups, sorted
  std::vector<RankProgram> ranks;

  size_t totalOps() const;
  // Frees the ops of every rank but `rank` (validation needed them all; the
  // run needs its own, the groups and everyone's `owns`).
  void keepOpsOf(int rank);
};

// Where an op sits in the document: ranks[rank].ops[op](.ops[child]).
struct OpRef {
  int32_t rank = -1, op = -1, child = -1;
  std::string str() const;
};

// "forward (s=1, b=0)", "recv grad (s=2, b=0) from rank 2", ...
std::string describe(const Program &program, const Op &op);
// The same, a group listing its ops: "group (send ...; recv ...)".
std::string describe(const Program &program, const RankProgram &rp, const Op &op);
std::string groupString(const std::vector<int> &group);

// Keys of the tensor store: (kind, stage, microbatch) in 63 bits.
inline uint64_t tensorKey(TensorKind kind, int stage, int microbatch) {
  return (uint64_t(kind) << 62) | (uint64_t(uint32_t(stage)) << 31) |
         uint64_t(uint32_t(microbatch));
}
std::string describeKey(uint64_t key); // "act (s=0, b=1)"

// The store keys an op reads / writes (a group: those of its children).
// The stage graph is the chain, so stage s reads stage s-1's activation.
template <class F>
void forEachRead(const Program &p, const RankProgram &rp, const Op &op, F &&f) {
  switch (op.kind) {
  case OpKind::Forward:
    if (op.stage > 0)
      f(tensorKey(TensorKind::Act, op.stage - 1, op.microbatch));
    break;
  case OpKind::Backward:
  case OpKind::BackwardWeight:
    if (op.stage > 0)
      f(tensorKey(TensorKind::Act, op.stage - 1, op.microbatch));
    if (op.stage + 1 < p.stages)
      f(tensorKey(TensorKind::Grad, op.stage + 1, op.microbatch));
    else // the loss gradient comes from the stage's own output
      f(tensorKey(TensorKind::Act, op.stage, op.microbatch));
    break;
  case OpKind::Send:
    f(tensorKey(op.tensor, op.stage, op.microbatch));
    break;
  case OpKind::Group:
    for (uint32_t i = 0; i < op.numChildren; ++i)
      forEachRead(p, rp, rp.childrenOf(op)[i], f);
    break;
  default:
    break;
  }
}

template <class F>
void forEachWrite(const Program &p, const RankProgram &rp, const Op &op, F &&f) {
  switch (op.kind) {
  case OpKind::Forward:
    f(tensorKey(TensorKind::Act, op.stage, op.microbatch));
    break;
  case OpKind::Backward:
    if (op.stage > 0)
      f(tensorKey(TensorKind::Grad, op.stage, op.microbatch));
    break;
  case OpKind::Recv:
    f(tensorKey(op.tensor, op.stage, op.microbatch));
    break;
  case OpKind::Group:
    for (uint32_t i = 0; i < op.numChildren; ++i)
      forEachWrite(p, rp, rp.childrenOf(op)[i], f);
    break;
  default:
    break;
  }
}

} // namespace pipesched::runtime
