#include "program/program.h"

#include <algorithm>
#include <sstream>

namespace pipesched::runtime {

bool RankProgram::ownsStage(int stage) const {
  return std::binary_search(ownsSorted.begin(), ownsSorted.end(), stage);
}

IdList RankProgram::reads(const Op &op) const {
  if (isCompute(op.kind))
    return {tensorIds.data() + op.first, op.count};
  if (op.kind == OpKind::Send)
    return {&op.tensor, 1};
  return {};
}

IdList RankProgram::writes(const Op &op) const {
  if (isCompute(op.kind))
    return {tensorIds.data() + op.first + op.count, op.writes};
  if (op.kind == OpKind::Recv)
    return {&op.tensor, 1};
  return {};
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
      std::vector<int64_t>().swap(rp.tensorIds);
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

std::string listString(const std::vector<int> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string describeTensor(const Program &p, int64_t id) {
  if (p.isScanTensor(id))
    return "scan tensor " + std::to_string(id - p.scanBase());
  program::TensorRef t = program::tensorOf(id, p.microbatches);
  return std::string(program::tensorKindName(t.kind)) + " (s=" +
         std::to_string(t.stage) + ", b=" + std::to_string(t.microbatch) + ")";
}

std::string describe(const Program &program, const Op &op) {
  std::ostringstream os;
  os << opName(op.kind);
  switch (op.kind) {
  case OpKind::Forward:
  case OpKind::Backward:
  case OpKind::BackwardWeight:
  case OpKind::LossGrad:
  case OpKind::Jacobian:
    os << " (s=" << op.stage << ", b=" << op.microbatch << ")";
    break;
  case OpKind::Combine:
    os << " " << program::productName(op.product) << " (s=" << op.stage
       << ", b=" << op.microbatch << ")";
    break;
  case OpKind::Send:
  case OpKind::Recv:
    os << " " << describeTensor(program, op.tensor)
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
      os << " over " << listString(program.groups[op.group]);
    break;
  case OpKind::TiedGrad:
    os << " (tie " << op.tie;
    if (op.tie >= 0 && size_t(op.tie) < program.ties.size())
      os << ": stages " << listString(program.ties[size_t(op.tie)]);
    os << ")";
    if (op.group >= 0 && size_t(op.group) < program.groups.size())
      os << " over " << listString(program.groups[op.group]);
    break;
  case OpKind::Group:
    os << " of " << op.count << " ops";
    break;
  }
  return os.str();
}

std::string describe(const Program &program, const RankProgram &rp,
                     const Op &op) {
  if (op.kind != OpKind::Group)
    return describe(program, op);
  std::string s = "group (";
  for (uint32_t c = 0; c < op.count; ++c)
    s += (c ? "; " : "") + describe(program, rp.childrenOf(op)[c]);
  return s + ")";
}

bool runsOnCommunicationStream(OpKind kind) {
  return isPointToPoint(kind) || kind == OpKind::Group ||
         (isCollective(kind) && kind != OpKind::TiedGrad);
}

} // namespace pipesched::runtime
