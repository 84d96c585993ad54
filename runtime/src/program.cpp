#include "program.h"

#include <sstream>

namespace pipesched::runtime {

const char *opName(OpKind kind) {
  switch (kind) {
  case OpKind::Forward: return "forward";
  case OpKind::Backward: return "backward";
  case OpKind::BackwardWeight: return "backward_weight";
  case OpKind::Send: return "send";
  case OpKind::Recv: return "recv";
  case OpKind::SendWeights: return "send_weights";
  case OpKind::FetchWeights: return "fetch_weights";
  case OpKind::ReleaseWeights: return "release_weights";
  case OpKind::AllreduceGrad: return "allreduce_grad";
  case OpKind::ReduceGrad: return "reduce_grad";
  case OpKind::OptimizerStep: return "optimizer_step";
  case OpKind::Group: return "group";
  }
  return "?";
}

const char *tensorName(TensorKind kind) {
  return kind == TensorKind::Act ? "act" : "grad";
}

size_t Program::totalOps() const {
  size_t n = 0;
  for (const RankProgram &r : ranks)
    n += r.ops.size() + r.children.size();
  return n;
}

void Program::keepOpsOf(int rank) {
  for (RankProgram &rp : ranks)
    if (rp.rank != rank) {
      std::vector<Op>().swap(rp.ops);
      std::vector<Op>().swap(rp.children);
    }
}

std::string OpRef::str() const {
  std::string s = "ranks[" + std::to_string(rank) + "]";
  if (op >= 0)
    s += ".ops[" + std::to_string(op) + "]";
  if (child >= 0)
    s += ".ops[" + std::to_string(child) + "]";
  return s;
}

std::string groupString(const std::vector<int> &group) {
  std::string s = "[";
  for (size_t i = 0; i < group.size(); ++i)
    s += (i ? ", " : "") + std::to_string(group[i]);
  return s + "]";
}

std::string describe(const Program &program, const Op &op) {
  std::ostringstream os;
  os << opName(op.kind);
  switch (op.kind) {
  case OpKind::Forward:
  case OpKind::Backward:
  case OpKind::BackwardWeight:
    os << " (s=" << op.stage << ", b=" << op.microbatch << ")";
    break;
  case OpKind::Send:
  case OpKind::Recv:
    os << " " << tensorName(op.tensor) << " (s=" << op.stage
       << ", b=" << op.microbatch << ")"
       << (op.kind == OpKind::Send ? " to rank " : " from rank ") << op.peer;
    break;
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    os << " (s=" << op.stage << ")"
       << (op.kind == OpKind::SendWeights ? " to rank " : " from rank ")
       << op.peer;
    break;
  case OpKind::ReleaseWeights:
  case OpKind::OptimizerStep:
    os << " (s=" << op.stage << ")";
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
    os << " (s=" << op.stage << ")";
    if (op.kind == OpKind::ReduceGrad)
      os << " onto rank " << op.root;
    if (op.group >= 0 && size_t(op.group) < program.groups.size())
      os << " over " << groupString(program.groups[op.group]);
    break;
  case OpKind::Group:
    os << " of " << op.numChildren << " ops";
    break;
  }
  return os.str();
}

std::string describe(const Program &program, const RankProgram &rp,
                     const Op &op) {
  if (op.kind != OpKind::Group)
    return describe(program, op);
  std::string s = "group (";
  for (uint32_t c = 0; c < op.numChildren; ++c)
    s += (c ? "; " : "") + describe(program, rp.childrenOf(op)[c]);
  return s + ")";
}

std::string describeKey(uint64_t key) {
  TensorKind kind = TensorKind(key >> 62);
  int stage = int((key >> 31) & 0x7fffffff);
  int mb = int(key & 0x7fffffff);
  return std::string(tensorName(kind)) + " (s=" + std::to_string(stage) +
         ", b=" + std::to_string(mb) + ")";
}

} // namespace pipesched::runtime
