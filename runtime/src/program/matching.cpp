#include "program/matching.h"

#include "program/program_error.h"

#include "pipesched/Scheduling/DeadlockCheck.h"

#include <string>

namespace pipesched::runtime {
namespace {

namespace sched = pipesched::scheduling;

using sched::PayloadKind;

static_assert(int(PayloadKind::Activation) == int(program::TensorKind::Act) &&
                  int(PayloadKind::Gradient) == int(program::TensorKind::Grad) &&
                  int(PayloadKind::Scan) == int(program::TensorKind::Scan),
              "the deadlock check names tensor kinds as the schema does");

/// What a transfer of `tensor` carries.
PayloadKind payloadKind(const Program &p, int64_t tensor) {
  return p.isScanTensor(tensor)
             ? PayloadKind::Scan
             : PayloadKind(program::tensorOf(tensor, p.microbatches).kind);
}

std::string ordinal(size_t n) {
  const char *suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1)
      suffix = "st";
    else if (n % 10 == 2)
      suffix = "nd";
    else if (n % 10 == 3)
      suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

class Matching {
public:
  explicit Matching(const Program &p) : p_(p) {}

  void run() {
    build();
    sched::DeadlockResult result = sched::checkDeadlockFree(programs_);
    if (result.status == sched::DeadlockResult::Mismatch)
      mismatch(result);
    if (result.status == sched::DeadlockResult::Deadlock)
      deadlock(result);
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw ProgramError(p_.source + ": " + what);
  }

  const Op &at(const OpRef &ref) const {
    const RankProgram &rp = p_.ranks[size_t(ref.rank)];
    const Op &op = rp.ops[size_t(ref.op)];
    return ref.child < 0 ? op : rp.childrenOf(op)[ref.child];
  }
  std::string what(const OpRef &ref) const { return describe(p_, at(ref)); }
  std::string detail(const OpRef &ref) const {
    const Op &op = at(ref);
    return what(ref) + " (tag " + std::to_string(op.tag) + ", " +
           std::to_string(op.bytes) + " bytes)";
  }

  uint32_t remember(const OpRef &ref) {
    refs_.push_back(ref);
    return uint32_t(refs_.size() - 1);
  }

  // Only communication matters: local ops complete at once, so they are
  // left out (ids point back into the program through refs_).
  void build() {
    programs_.resize(p_.ranks.size());
    for (const RankProgram &rp : p_.ranks) {
      sched::RankProgram &steps = programs_[size_t(rp.rank)];
      for (size_t i = 0; i < rp.ops.size(); ++i) {
        const Op &op = rp.ops[i];
        const OpRef ref{int32_t(rp.rank), int32_t(i), -1};
        if (isCollective(op.kind)) {
          sched::ProgramStep step;
          step.kind = sched::ProgramStep::Collective;
          const std::vector<int> &members = p_.groups[size_t(op.group)];
          step.members.assign(members.begin(), members.end());
          step.payload.what = op.kind == OpKind::AllreduceGrad ? PayloadKind::AllReduce
                              : op.kind == OpKind::ReduceGrad  ? PayloadKind::Reduce
                                                               : PayloadKind::Tied;
          step.payload.stage = op.kind == OpKind::TiedGrad ? op.tie : op.stage;
          step.payload.bytes = op.bytes;
          step.payload.root = op.root;
          step.id = remember(ref);
          steps.push_back(std::move(step));
          continue;
        }
        if (!isPointToPoint(op.kind) && op.kind != OpKind::Group)
          continue;
        // A lone transfer is a group of one.
        const bool group = op.kind == OpKind::Group;
        const Op *children = group ? rp.childrenOf(op) : &op;
        const uint32_t n = group ? op.count : 1;
        sched::ProgramStep step;
        step.kind = sched::ProgramStep::Group;
        step.id = remember(ref);
        step.ops.reserve(n);
        for (uint32_t c = 0; c < n; ++c) {
          const Op &x = children[c];
          sched::CommOp comm;
          comm.isSend = isOutgoing(x.kind);
          comm.peer = x.peer;
          comm.payload.what = x.kind == OpKind::Send || x.kind == OpKind::Recv
                                  ? payloadKind(p_, x.tensor)
                                  : PayloadKind::Weights;
          comm.payload.stage = x.stage;
          comm.payload.microbatch = x.kind == OpKind::Send || x.kind == OpKind::Recv
                                        ? x.microbatch
                                        : 0;
          comm.payload.tag = x.tag;
          comm.payload.bytes = x.bytes;
          comm.id = group ? remember(OpRef{ref.rank, ref.op, int32_t(c)}) : step.id;
          step.ops.push_back(comm);
        }
        steps.push_back(std::move(step));
      }
    }
  }

  // Calls f(op, ref) for every op of a rank in program order, group
  // children included; stops when f returns false.
  template <class F> void walk(const RankProgram &rp, F &&f) const {
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op &op = rp.ops[i];
      OpRef ref{int32_t(rp.rank), int32_t(i), -1};
      if (op.kind != OpKind::Group) {
        if (!f(op, ref))
          return;
        continue;
      }
      for (uint32_t c = 0; c < op.count; ++c) {
        ref.child = int32_t(c);
        if (!f(rp.childrenOf(op)[c], ref))
          return;
      }
    }
  }

  // The position (from 1) of a transfer among those of its ordered pair
  // on its rank: NCCL matches the k-th send with the k-th receive.
  size_t position(const OpRef &target) const {
    const Op &t = at(target);
    const bool out = isOutgoing(t.kind);
    size_t k = 0;
    walk(p_.ranks[size_t(target.rank)], [&](const Op &op, const OpRef &ref) {
      if (isPointToPoint(op.kind) && isOutgoing(op.kind) == out && op.peer == t.peer)
        ++k;
      return !(ref.op == target.op && ref.child == target.child);
    });
    return k;
  }

  // How many transfers rank `from` sends to rank `to`, and `to` receives.
  std::pair<size_t, size_t> pairCounts(int from, int to) const {
    size_t sends = 0, receives = 0;
    walk(p_.ranks[size_t(from)], [&](const Op &op, const OpRef &) {
      sends += isPointToPoint(op.kind) && isOutgoing(op.kind) && op.peer == to;
      return true;
    });
    walk(p_.ranks[size_t(to)], [&](const Op &op, const OpRef &) {
      receives += isPointToPoint(op.kind) && !isOutgoing(op.kind) && op.peer == from;
      return true;
    });
    return {sends, receives};
  }

  // The position (from 1) of a collective among its rank's on its group.
  size_t collectivePosition(const OpRef &target) const {
    const RankProgram &rp = p_.ranks[size_t(target.rank)];
    const int group = at(target).group;
    size_t k = 0;
    for (int32_t i = 0; i <= target.op; ++i)
      k += isCollective(rp.ops[size_t(i)].kind) && rp.ops[size_t(i)].group == group;
    return k;
  }

  static std::string differs(const std::string &field, bool collective) {
    if (field == "tensor")
      return collective ? "the kinds differ" : "the tensors differ";
    if (field == "bytes")
      return "the sizes differ";
    if (field == "microbatch")
      return "the microbatches differ";
    return "the " + field + "s differ";
  }

  [[noreturn]] void mismatch(const sched::DeadlockResult &r) const {
    const OpRef &a = refs_[r.first], &b = refs_[r.second];
    // rule: collective-match
    if (isCollective(at(a).kind))
      fail(b.str() + ": " + what(b) + " does not match rank " + std::to_string(a.rank) +
           "'s " + ordinal(collectivePosition(a)) + " collective on these members, " +
           a.str() + ": " + what(a) + " (" + differs(r.field, true) + ")");
    // a is the send, b the receive.
    // rule: transfer-match
    fail(a.str() + ": " + detail(a) + " does not match the " + ordinal(position(b)) +
         " receive from rank " + std::to_string(a.rank) + " on rank " +
         std::to_string(b.rank) + ", " + b.str() + ": " + detail(b) + " (" +
         differs(r.field, false) + ")");
  }

  std::string waitString(const sched::Wait &w) const {
    const OpRef &ref = refs_[w.opId];
    return "rank " + std::to_string(w.rank) + " waits in " + ref.str() + " (" +
           what(ref) + ") for rank " + std::to_string(w.waitsFor);
  }

  [[noreturn]] void deadlock(const sched::DeadlockResult &r) const {
    if (r.cycle) {
      std::string cycle;
      for (const sched::Wait &w : r.waits)
        cycle += (cycle.empty() ? "" : ", ") + waitString(w);
      // rule: deadlock-cycle
      fail("the rank programs deadlock: " + cycle +
           (r.waits.size() > 1 ? " (a cycle)" : ""));
    }
    // No cycle: the waits end at a rank that finished without the
    // counterpart.
    for (const sched::Wait &w : r.waits) {
      if (!w.peerFinished)
        continue;
      const OpRef &ref = refs_[w.opId];
      const Op &op = at(ref);
      const std::string peer = std::to_string(w.waitsFor);
      // rule: collective-counterpart
      if (isCollective(op.kind))
        fail(ref.str() + ": " + what(ref) + " has no counterpart: rank " + peer +
             " ends without calling it");
      const bool out = isOutgoing(op.kind);
      auto [sends, receives] =
          out ? pairCounts(w.rank, w.waitsFor) : pairCounts(w.waitsFor, w.rank);
      // rule: transfer-counterpart
      fail(ref.str() + ": " + what(ref) + " has no matching " +
           (out ? "receive" : "send") + ": rank " + peer + " ends without posting it (rank " +
           std::to_string(out ? w.rank : w.waitsFor) + " sends " + std::to_string(sends) +
           " messages to rank " + std::to_string(out ? w.waitsFor : w.rank) +
           ", which receives " + std::to_string(receives) + ")");
    }
    std::string waits;
    for (const sched::Wait &w : r.waits)
      waits += (waits.empty() ? "" : ", ") + waitString(w);
    // rule: deadlock-chain
    fail("the rank programs deadlock: " + waits);
  }

  const Program &p_;
  std::vector<sched::RankProgram> programs_;
  std::vector<OpRef> refs_; // what each id of the check names
};

} // namespace

void checkMatching(const Program &program) { Matching(program).run(); }

} // namespace pipesched::runtime
