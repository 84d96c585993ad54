#include "validator.h"

#include "loader.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace pipesched::runtime {
namespace {

std::string ordinal(size_t n) {
  const char *suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    else if (n % 10 == 2) suffix = "nd";
    else if (n % 10 == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

class Validator {
public:
  Validator(const Program &p, const ValidateOptions &o) : p_(p), options_(o) {}

  void run() {
    checkJobs();
    for (const RankProgram &rp : p_.ranks)
      checkRank(rp);
    checkPointToPoint();
    checkCollectives();
  }

private:
  [[noreturn]] void fail(const OpRef &ref, const std::string &what) const {
    throw ProgramError(p_.source + ": " + ref.str() + ": " + what);
  }
  [[noreturn]] void fail(const std::string &what) const {
    throw ProgramError(p_.source + ": " + what);
  }

  const Op &at(const OpRef &ref) const {
    const RankProgram &rp = p_.ranks[ref.rank];
    const Op &op = rp.ops[ref.op];
    return ref.child < 0 ? op : rp.childrenOf(op)[ref.child];
  }
  std::string what(const OpRef &ref) const { return describe(p_, at(ref)); }

  // Calls f(op, ref) for every op of a rank, group children included.
  template <class F> void forEachOp(const RankProgram &rp, F &&f) const {
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op &op = rp.ops[i];
      OpRef ref{int32_t(rp.rank), int32_t(i), -1};
      if (op.kind != OpKind::Group) {
        f(op, ref);
        continue;
      }
      for (uint32_t c = 0; c < op.numChildren; ++c) {
        ref.child = int32_t(c);
        f(rp.childrenOf(op)[c], ref);
      }
    }
  }

  void checkJobs() const;
  void checkRank(const RankProgram &rp) const;
  void checkPointToPoint() const;
  void checkCollectives() const;

  const Program &p_;
  const ValidateOptions &options_;
};

// Each forward, backward (and backward_weight when split) runs exactly once
// over all ranks: the reference computes every job once, so must the program.
void Validator::checkJobs() const {
  const int S = p_.stages, B = p_.microbatches;
  const int directions = p_.splitBackward ? 3 : 2;
  int64_t jobs = int64_t(S) * B;
  int64_t computeOps = 0;
  for (const RankProgram &rp : p_.ranks)
    for (const Op &op : rp.ops)
      computeOps += isCompute(op.kind);
  // Bound the table by the program's size, not by stages x microbatches.
  if (jobs > computeOps + 1024 || jobs * directions > computeOps + 1024)
    fail("the program has " + std::to_string(computeOps) +
         " compute ops for stages x microbatches = " + std::to_string(jobs) +
         " jobs per direction (every forward and backward must run exactly once)");
  std::vector<OpRef> seen(size_t(jobs) * directions);
  for (const RankProgram &rp : p_.ranks)
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op &op = rp.ops[i];
      if (!isCompute(op.kind))
        continue;
      int d = op.kind == OpKind::Forward ? 0 : op.kind == OpKind::Backward ? 1 : 2;
      OpRef &slot = seen[(size_t(d) * S + op.stage) * B + op.microbatch];
      OpRef ref{int32_t(rp.rank), int32_t(i), -1};
      if (slot.rank >= 0)
        fail(ref, describe(p_, op) + " runs twice (first at " + slot.str() + ")");
      slot = ref;
    }
  static const char *names[] = {"forward", "backward", "backward_weight"};
  for (int d = 0; d < directions; ++d)
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < B; ++b)
        if (seen[(size_t(d) * S + s) * B + b].rank < 0)
          fail(std::string(names[d]) + " (s=" + std::to_string(s) +
               ", b=" + std::to_string(b) + ") runs on no rank");
}

// One pass over a rank's ops tracking what it holds: tensors computed or
// received (a group's receives land when the whole group completes) and
// fetched weight copies.
void Validator::checkRank(const RankProgram &rp) const {
  const int r = rp.rank;
  std::unordered_set<uint64_t> have;
  std::vector<char> fetched(p_.stages, 0);
  std::vector<char> pendingFetch(p_.stages, 0);
  const std::string rankName = "rank " + std::to_string(r);

  auto needs = [&](const Op &op, const OpRef &ref) {
    forEachRead(p_, rp, op, [&](uint64_t key) {
      if (!have.count(key))
        fail(ref, describe(p_, op) + " needs " + describeKey(key) +
                      ", which no earlier op of " + rankName +
                      " computes or receives");
    });
  };
  auto weightsOf = [&](int stage) { return rp.ownsStage(stage) || fetched[stage]; };

  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    OpRef ref{int32_t(r), int32_t(i), -1};
    const std::string s = std::to_string(op.stage);
    switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Backward:
    case OpKind::BackwardWeight:
      if (!weightsOf(op.stage))
        fail(ref, describe(p_, op) + " needs stage " + s +
                      "'s weights, which " + rankName + " neither owns nor fetched");
      needs(op, ref);
      break;
    case OpKind::ReleaseWeights:
      if (!fetched[op.stage])
        fail(ref, "releases stage " + s + "'s weights, which " + rankName +
                      " has not fetched");
      fetched[op.stage] = 0;
      break;
    case OpKind::OptimizerStep:
      if (!rp.ownsStage(op.stage))
        fail(ref, describe(p_, op) + ": " + rankName + " does not own stage " + s);
      break;
    case OpKind::ReduceGrad:
      if (!p_.ranks[op.root].ownsStage(op.stage))
        fail(ref, describe(p_, op) + ": the root, rank " +
                      std::to_string(op.root) + ", does not own stage " + s);
      break;
    case OpKind::AllreduceGrad:
      break;
    case OpKind::Send:
    case OpKind::Recv:
    case OpKind::SendWeights:
    case OpKind::FetchWeights:
    case OpKind::Group: {
      // A lone transfer is a group of one.
      const Op *children = op.kind == OpKind::Group ? rp.childrenOf(op) : &op;
      uint32_t n = op.kind == OpKind::Group ? op.numChildren : 1;
      for (uint32_t c = 0; c < n; ++c) {
        const Op &x = children[c];
        OpRef cref = ref;
        if (op.kind == OpKind::Group)
          cref.child = int32_t(c);
        const std::string xs = std::to_string(x.stage);
        if (x.kind == OpKind::Send)
          needs(x, cref);
        if (x.kind == OpKind::SendWeights && !rp.ownsStage(x.stage))
          fail(cref, describe(p_, x) + ": " + rankName + " does not own stage " + xs);
        if (x.kind == OpKind::FetchWeights) {
          if (rp.ownsStage(x.stage))
            fail(cref, describe(p_, x) + ": " + rankName + " owns stage " + xs);
          if (fetched[x.stage] || pendingFetch[x.stage])
            fail(cref, describe(p_, x) + ": " + rankName +
                           " already holds a fetched copy (release it first)");
          pendingFetch[x.stage] = 1;
        }
      }
      for (uint32_t c = 0; c < n; ++c) {
        const Op &x = children[c];
        if (x.kind == OpKind::FetchWeights) {
          pendingFetch[x.stage] = 0;
          fetched[x.stage] = 1;
        }
      }
      break;
    }
    }
    forEachWrite(p_, rp, op, [&](uint64_t key) { have.insert(key); });
  }
}

bool matches(const Op &out, const Op &in) {
  if (out.tag != in.tag || out.stage != in.stage || out.bytes != in.bytes)
    return false;
  if (out.kind == OpKind::Send)
    return in.kind == OpKind::Recv && out.tensor == in.tensor &&
           out.microbatch == in.microbatch;
  return in.kind == OpKind::FetchWeights;
}

// Per ordered pair (a, b), the k-th send of a to b matches the k-th receive
// of b from a (NCCL's rule), whatever the kinds in between.
void Validator::checkPointToPoint() const {
  const uint64_t W = uint64_t(p_.workers);
  std::unordered_map<uint64_t, std::vector<OpRef>> outs, ins;
  std::unordered_map<int64_t, OpRef> tags;
  for (const RankProgram &rp : p_.ranks)
    forEachOp(rp, [&](const Op &op, const OpRef &ref) {
      if (!isP2P(op.kind))
        return;
      if (isOutgoing(op.kind)) {
        if (op.tag > options_.maxTag)
          fail(ref, "tag " + std::to_string(op.tag) +
                        " exceeds the transport's largest tag " +
                        std::to_string(options_.maxTag));
        auto [it, fresh] = tags.emplace(op.tag, ref);
        if (!fresh)
          fail(ref, describe(p_, op) + " reuses tag " + std::to_string(op.tag) +
                        " of " + it->second.str() +
                        " (tags are unique per message in a step)");
        outs[uint64_t(rp.rank) * W + uint64_t(op.peer)].push_back(ref);
      } else {
        ins[uint64_t(op.peer) * W + uint64_t(rp.rank)].push_back(ref);
      }
    });

  auto detail = [&](const OpRef &ref) {
    const Op &op = at(ref);
    return ref.str() + ": " + describe(p_, op) + " (tag " + std::to_string(op.tag) +
           ", " + std::to_string(op.bytes) + " bytes)";
  };
  static const std::vector<OpRef> none;
  auto get = [](const auto &map, uint64_t key) -> const std::vector<OpRef> & {
    auto it = map.find(key);
    return it == map.end() ? none : it->second;
  };
  // Walk in program order so that the first mismatch reported is the
  // earliest one.
  for (const RankProgram &rp : p_.ranks) {
    std::unordered_map<uint64_t, size_t> position;
    forEachOp(rp, [&](const Op &op, const OpRef &ref) {
      if (!isP2P(op.kind))
        return;
      bool out = isOutgoing(op.kind);
      uint64_t pair = out ? uint64_t(rp.rank) * W + uint64_t(op.peer)
                          : uint64_t(op.peer) * W + uint64_t(rp.rank);
      size_t k = position[pair]++;
      const std::vector<OpRef> &other = get(out ? ins : outs, pair);
      const std::vector<OpRef> &mine = get(out ? outs : ins, pair);
      std::string from = std::to_string(out ? rp.rank : op.peer);
      std::string to = std::to_string(out ? op.peer : rp.rank);
      if (k >= other.size())
        fail(ref, describe(p_, op) + " has no matching " +
                      (out ? "receive" : "send") + ": rank " + from + " sends " +
                      std::to_string(out ? mine.size() : other.size()) +
                      " messages to rank " + to + ", which receives " +
                      std::to_string(out ? other.size() : mine.size()));
      if (out && !matches(op, at(other[k])))
        fail(ref, describe(p_, op) + " (tag " + std::to_string(op.tag) + ", " +
                      std::to_string(op.bytes) + " bytes) does not match the " +
                      ordinal(k + 1) + " receive from rank " + from +
                      " on rank " + to + ", " + detail(other[k]));
    });
  }
}

// The collectives on one group form the same sequence (kind, stage, root)
// on every member.
void Validator::checkCollectives() const {
  const uint64_t W = uint64_t(p_.workers);
  std::unordered_map<uint64_t, std::vector<OpRef>> calls; // (group, rank)
  for (const RankProgram &rp : p_.ranks)
    for (size_t i = 0; i < rp.ops.size(); ++i)
      if (isCollective(rp.ops[i].kind))
        calls[uint64_t(rp.ops[i].group) * W + uint64_t(rp.rank)].push_back(
            OpRef{int32_t(rp.rank), int32_t(i), -1});
  static const std::vector<OpRef> none;
  for (size_t g = 0; g < p_.groups.size(); ++g) {
    const std::vector<int> &members = p_.groups[g];
    auto seq = [&](int r) -> const std::vector<OpRef> & {
      auto it = calls.find(uint64_t(g) * W + uint64_t(r));
      return it == calls.end() ? none : it->second;
    };
    const std::vector<OpRef> &first = seq(members[0]);
    for (size_t m = 1; m < members.size(); ++m) {
      const std::vector<OpRef> &other = seq(members[m]);
      size_t n = std::min(first.size(), other.size());
      for (size_t k = 0; k < n; ++k) {
        const Op &a = at(first[k]), &b = at(other[k]);
        if (a.kind != b.kind || a.stage != b.stage || a.root != b.root)
          fail(other[k], what(other[k]) + " does not match rank " +
                             std::to_string(members[0]) + "'s " + ordinal(k + 1) +
                             " collective on this group, " + first[k].str() +
                             ": " + what(first[k]));
      }
      if (first.size() != other.size()) {
        const OpRef &extra = first.size() > n ? first[n] : other[n];
        int missing = first.size() > n ? members[m] : members[0];
        fail(extra, what(extra) + " has no counterpart on rank " +
                        std::to_string(missing) + " (rank " +
                        std::to_string(members[0]) + " calls " +
                        std::to_string(first.size()) + " collectives on " +
                        groupString(members) + ", rank " +
                        std::to_string(members[m]) + " calls " +
                        std::to_string(other.size()) + ")");
      }
    }
  }
}

} // namespace

void validate(const Program &program, const ValidateOptions &options) {
  Validator(program, options).run();
}

} // namespace pipesched::runtime
