#include "program/rank_image.h"

#include "program/program_error.h"
#include "program/roles.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace pipesched::runtime {
namespace {

// What precedes the arrays: their lengths, and what tells another build's
// layout apart.
struct Header {
  uint32_t magic;
  uint32_t opBytes; // sizeof(Op)
  uint64_t ops, children, ids;
};
constexpr uint32_t kMagic = 0x49525350; // "PSRI"

template <class T> void append(std::string &out, const std::vector<T> &v) {
  out.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

template <class T> size_t take(const std::string &in, size_t at, std::vector<T> &v) {
  if (!v.empty())
    std::memcpy(static_cast<void *>(v.data()), in.data() + at, v.size() * sizeof(T));
  return at + v.size() * sizeof(T);
}

// Why an op cannot be what the loader makes of a rank file, or nullptr:
// the ranges the validator indexes with, as the loader checks them.
const char *opProblem(const Program &p, const RankProgram &rp, const Op &op, bool child) {
  if (uint8_t(op.kind) >= program::kNumOpKinds)
    return "an unknown op kind";
  if (child && !isPointToPoint(op.kind))
    return "a group holding what is not a transfer";
  if (op.stage < -1 || op.stage >= p.stages || op.microbatch < -1 ||
      op.microbatch >= p.microbatches)
    return "a stage or microbatch out of range";
  const bool staged = op.kind != OpKind::Group && op.kind != OpKind::TiedGrad &&
                      op.kind != OpKind::Send && op.kind != OpKind::Recv;
  if (staged && op.stage < 0)
    return "an op without its stage";
  if (isCompute(op.kind) && op.microbatch < 0)
    return "a compute op without its microbatch";
  if (isCompute(op.kind) &&
      (uint64_t(op.first) + op.count + op.writes > rp.tensorIds.size() ||
       (op.kind == OpKind::Combine && op.product == program::ScanValue::None) ||
       !readsMatchRoles(p, op, rp.reads(op)) || !writesMatchRoles(p, op, rp.writes(op))))
    return "a compute op's reads or writes";
  if ((op.kind == OpKind::Send || op.kind == OpKind::Recv) &&
      (op.tensor < 0 || op.tensor >= p.tensorCount()))
    return "a tensor id out of range";
  if (isPointToPoint(op.kind) && (op.peer < 0 || op.peer >= p.workers || op.peer == rp.rank))
    return "a peer out of range";
  if (op.kind == OpKind::Group && uint64_t(op.first) + op.count > rp.children.size())
    return "a group's ops out of range";
  if (!isCollective(op.kind))
    return nullptr;
  if (op.group < 0 || size_t(op.group) >= p.groups.size())
    return "a collective group out of range";
  const std::vector<int> &members = p.groups[size_t(op.group)];
  if (!std::binary_search(members.begin(), members.end(), rp.rank) ||
      (op.kind == OpKind::ReduceGrad &&
       !std::binary_search(members.begin(), members.end(), op.root)) ||
      (op.kind == OpKind::TiedGrad && (op.tie < 0 || size_t(op.tie) >= p.ties.size())))
    return "a collective's members, root or tie";
  return nullptr;
}

const char *imageProblem(const Program &p, const RankProgram &rp) {
  for (int64_t id : rp.tensorIds)
    if (id < 0 || id >= p.tensorCount())
      return "a tensor id out of range";
  for (const Op &op : rp.ops)
    if (const char *why = opProblem(p, rp, op, false))
      return why;
  for (const Op &op : rp.children)
    if (const char *why = opProblem(p, rp, op, true))
      return why;
  return nullptr;
}

} // namespace

std::string packRankImage(const RankProgram &rp) {
  const Header h{kMagic, uint32_t(sizeof(Op)), rp.ops.size(), rp.children.size(),
                 rp.tensorIds.size()};
  std::string out(reinterpret_cast<const char *>(&h), sizeof h);
  out.reserve(sizeof h + (h.ops + h.children) * sizeof(Op) + h.ids * sizeof(int64_t));
  append(out, rp.ops);
  append(out, rp.children);
  append(out, rp.tensorIds);
  return out;
}

void unpackRankImage(const std::string &image, int rank, Program &p) {
  auto malformed = [&](const std::string &why) {
    return ProgramError(p.source + ": rank " + std::to_string(rank) +
                        "'s ops, as rank 0 received them, are malformed (" + why +
                        "): is every rank running the same pipeline-run?");
  };
  Header h{};
  if (image.size() < sizeof h)
    throw malformed("truncated");
  std::memcpy(&h, image.data(), sizeof h);
  // Each count is below the image's size, so the sum cannot overflow.
  const uint64_t n = image.size();
  if (h.magic != kMagic || h.opBytes != sizeof(Op) || h.ops > n || h.children > n ||
      h.ids > n ||
      sizeof h + (h.ops + h.children) * sizeof(Op) + h.ids * sizeof(int64_t) != n)
    throw malformed("another layout or size");
  RankProgram &rp = p.ranks[size_t(rank)];
  rp.ops.resize(size_t(h.ops));
  rp.children.resize(size_t(h.children));
  rp.tensorIds.resize(size_t(h.ids));
  size_t at = take(image, sizeof h, rp.ops);
  at = take(image, at, rp.children);
  take(image, at, rp.tensorIds);
  if (const char *why = imageProblem(p, rp)) {
    p.ranks[size_t(rank)].ops.clear(); // nothing malformed stays behind
    p.ranks[size_t(rank)].children.clear();
    p.ranks[size_t(rank)].tensorIds.clear();
    throw malformed(why);
  }
}

} // namespace pipesched::runtime
