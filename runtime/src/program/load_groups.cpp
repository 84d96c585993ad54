// The loader's collective groups: each collective op's members, interned
// so that equal lists share one group. Of a per-rank program the index
// lists them all: each collective's members must be one of its groups, and
// each group some collective's members.
#include "program/loader_impl.h"

#include <algorithm>

namespace pipesched::runtime::loading {

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

void Loader::checkGroupsUsed() const {
  for (size_t g = 0; g < groupUsed_.size(); ++g)
    if (!groupUsed_[g])
      throw ProgramError(indexSource_ + ": " +
                         JsonPath().key(schema::layout::kCollectiveGroups).index(int64_t(g)).str() +
                         ": no collective op of any rank has these members");
}

} // namespace pipesched::runtime::loading
