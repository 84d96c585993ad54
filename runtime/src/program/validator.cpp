#include "program/validator.h"

#include "program/matching.h"
#include "program/program_error.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

namespace pipesched::runtime {
namespace {

// What a rank does with one stage's weight gradient, in program order.
struct GradientUse {
  int32_t optimizerStep = -1;      // its optimizer_step
  int32_t lastCollective = -1;     // its last allreduce_grad / reduce_grad
  int32_t wgradSinceCollective = -1; // the first weight-gradient job after it
  bool touched = false;
};

class Validator {
public:
  Validator(const Program &p, const ValidateOptions &o)
      : p_(p), options_(o), holder_(size_t(p.tensorCount()), -1),
        weights_(size_t(p.stages), kNone), uses_(size_t(p.stages)),
        owners_(size_t(p.stages)) {
    for (const RankProgram &rp : p.ranks) // in rank order: each list sorted
      for (int s : rp.owns)
        owners_[size_t(s)].push_back(rp.rank);
  }

  void run() {
    checkJobs();
    checkScan();
    for (const RankProgram &rp : p_.ranks)
      checkRank(rp);
    checkTags();
    checkGroupsUsed();
    checkMatching(p_);
  }

  // The checks that need rank r's ops alone (the others' may be absent:
  // only everyone's `owns` is read).
  void runRank(int r) {
    checkRank(p_.ranks[size_t(r)]);
    checkTags();
  }

private:
  enum WeightState : uint8_t { kNone, kPending, kFetched };

  [[noreturn]] void fail(const OpRef &ref, const std::string &what) const {
    throw ProgramError(p_.source + ": " + ref.str() + ": " + what);
  }
  [[noreturn]] void fail(const std::string &what) const {
    throw ProgramError(p_.source + ": " + what);
  }

  bool isWeightGradient(OpKind k) const {
    return p_.splitBackward || p_.scanned() ? k == OpKind::BackwardWeight
                                            : k == OpKind::Backward;
  }

  void checkJobs() const;
  void checkScan();
  void checkRank(const RankProgram &rp);
  void resetRank();
  void touch(int s);
  void checkCompute(const RankProgram &rp, const Op &op, const OpRef &ref);
  void checkOptimizerStep(const RankProgram &rp, const Op &op, const OpRef &ref);
  static std::string rankName(const RankProgram &rp) { return "rank " + std::to_string(rp.rank); }
  void checkTransfers(const RankProgram &rp, const Op &op, const OpRef &ref);
  void trackGradient(const RankProgram &rp, const Op &op, const OpRef &ref);
  void checkGradients(const RankProgram &rp);
  void checkTags() const;
  void checkGroupsUsed() const;
  void checkTiedGrad(const RankProgram &rp, const Op &op, const OpRef &ref);
  void checkReduction(const Op &op, const OpRef &ref) const;
  void checkReplicaReduced(const RankProgram &rp, int s) const;

  const Program &p_;
  const ValidateOptions &options_;
  // Per-rank state in arrays sized once and reset through touched lists, so
  // that checking every rank costs O(stages + tensors + ops), not W times it.
  std::vector<int32_t> holder_;      // tensor id -> the rank holding it
  std::vector<WeightState> weights_; // stage -> fetched copy on this rank
  std::vector<GradientUse> uses_;    // stage -> this rank's gradient use
  std::vector<int> touched_;         // stages whose entries are set
  std::vector<int32_t> tiedAt_;      // tie -> this rank's tied_grad (-1: none)
  std::vector<std::vector<int>> owners_; // stage -> the ranks owning it, sorted
  // Per tie, computed at its first tied_grad: the ranks owning one of its
  // stages, and whether each owns all of them (once, not once per rank).
  struct TieOwners {
    std::vector<int> owners;
    bool everyOwnerOwnsAll = true;
  };
  std::vector<std::optional<TieOwners>> tieOwners_;
  const TieOwners &tieOwners(int tie);
};

// Each forward, backward (and backward_weight when split) runs exactly once
// over all ranks: the reference computes every job once, so must the
// program. The loader bounded stages x microbatches by the compute ops.
void Validator::checkJobs() const {
  const int S = p_.stages, B = p_.microbatches;
  // A scanned backward has a forward and a weight gradient per (s, b) and
  // its scan jobs (checked by checkScan) instead of backwards.
  const int directions = p_.splitBackward || p_.scanned() ? 3 : 2;
  std::vector<OpRef> seen(size_t(S) * size_t(B) * size_t(directions));
  for (const RankProgram &rp : p_.ranks)
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op &op = rp.ops[i];
      if (!isCompute(op.kind) || program::isScan(op.kind))
        continue;
      // rule: scan-replaces-backward
      if (op.kind == OpKind::Backward && p_.scanned())
        fail(OpRef{int32_t(rp.rank), int32_t(i), -1},
             describe(p_, op) + " cannot run in a scanned backward (the scan "
                                "replaces every backward)");
      int d = op.kind == OpKind::Forward ? 0 : op.kind == OpKind::Backward ? 1 : 2;
      OpRef &slot = seen[(size_t(d) * S + size_t(op.stage)) * B + size_t(op.microbatch)];
      OpRef ref{int32_t(rp.rank), int32_t(i), -1};
      // rule: job-once
      if (slot.rank >= 0)
        fail(ref, describe(p_, op) + " runs twice (first at " + slot.str() + ")");
      slot = ref;
    }
  // rule: job-runs
  for (int d = 0; d < directions; ++d)
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < B; ++b)
        if (!(p_.scanned() && d == 1) &&
            seen[(size_t(d) * S + size_t(s)) * B + size_t(b)].rank < 0) {
          OpKind k = d == 0 ? OpKind::Forward
                            : d == 1 ? OpKind::Backward : OpKind::BackwardWeight;
          fail(std::string(opName(k)) + " (s=" + std::to_string(s) +
               ", b=" + std::to_string(b) + ") runs on no rank");
        }
}

// A scanned backward (BPPSA) runs on a chain; each scan tensor is written
// by exactly one op, which fixes what it holds (a vector or a matrix), and
// every read gets what it needs: a combine's right operand and a Jacobian
// are matrices, a jv's left operand and a weight gradient's are vectors.
void Validator::checkScan() {
  if (!p_.scanned())
    return;
  for (int s = 0; s < p_.stages; ++s) {
    StageList preds = p_.graph.predecessors(s);
    // rule: scan-chain
    if (!(s == 0 ? preds.empty() : preds.size() == 1 && preds[0] == s - 1) ||
        (s + 1 < p_.stages) == p_.graph.isSink(s))
      fail("a scanned backward needs the chain of stages 0 -> 1 -> ... -> " +
           std::to_string(p_.stages - 1) + "; stage " + std::to_string(s) +
           " differs");
  }
  auto &value = const_cast<Program &>(p_).scanValue;
  value.assign(size_t(p_.scanTensors), program::ScanValue::None);
  std::vector<OpRef> writer(size_t(p_.scanTensors));
  auto forEachScanOp = [&](auto &&f) {
    for (const RankProgram &rp : p_.ranks)
      for (size_t i = 0; i < rp.ops.size(); ++i)
        if (program::isScan(rp.ops[i].kind) || rp.ops[i].kind == OpKind::BackwardWeight)
          f(rp, rp.ops[i], OpRef{int32_t(rp.rank), int32_t(i), -1});
  };
  forEachScanOp([&](const RankProgram &rp, const Op &op, const OpRef &ref) {
    // rule: scan-loss-at-sink
    if (op.kind == OpKind::LossGrad && !p_.graph.isSink(op.stage))
      fail(ref, describe(p_, op) + ": the loss gradient is taken at the last stage");
    // rule: scan-no-first-jacobian
    if (op.kind == OpKind::Jacobian && op.stage == 0)
      fail(ref, describe(p_, op) + ": stage 0's Jacobian is never scanned");
    if (!program::isScan(op.kind))
      return;
    int64_t k = rp.writes(op)[0] - p_.scanBase();
    // rule: scan-written-once
    if (writer[size_t(k)].rank >= 0)
      fail(ref, describe(p_, op) + " writes " + describeTensor(p_, k + p_.scanBase()) +
                    ", which " + writer[size_t(k)].str() + " writes too");
    writer[size_t(k)] = ref;
    value[size_t(k)] = op.kind == OpKind::LossGrad ? program::ScanValue::Vector
                       : op.kind == OpKind::Jacobian ? program::ScanValue::Matrix
                                                     : op.product;
  });
  auto expect = [&](const OpRef &ref, const Op &op, int64_t id, program::ScanValue want,
                    const char *role) {
    program::ScanValue got = value[size_t(id - p_.scanBase())];
    if (got == want)
      return;
    auto name = [](program::ScanValue v) {
      return v == program::ScanValue::Vector ? "a vector"
             : v == program::ScanValue::Matrix ? "a matrix" : "written by no op";
    };
    // rule: scan-operand-kind
    fail(ref, describe(p_, op) + " reads " + describeTensor(p_, id) + " as its " + role +
                  ", which needs " + name(want) + "; it is " + name(got));
  };
  forEachScanOp([&](const RankProgram &rp, const Op &op, const OpRef &ref) {
    IdList reads = rp.reads(op);
    if (op.kind == OpKind::Combine) {
      expect(ref, op, reads[0], op.product, "left operand");
      expect(ref, op, reads[1], program::ScanValue::Matrix, "right operand");
    } else if (op.kind == OpKind::BackwardWeight) {
      expect(ref, op, reads[0], program::ScanValue::Vector, "output gradient");
    }
  });
  for (size_t k = 0; k < writer.size(); ++k)
    // rule: scan-written
    if (writer[k].rank < 0)
      fail(describeTensor(p_, int64_t(k) + p_.scanBase()) + " is written by no op");
}

// One pass over a rank's ops tracking what it holds: tensors computed or
// received (a group's receives land when the whole group completes),
// fetched weight copies, and what happens to each stage's weight gradient.
void Validator::checkRank(const RankProgram &rp) {
  resetRank();
  for (size_t i = 0; i < rp.ops.size(); ++i) {
    const Op &op = rp.ops[i];
    const OpRef ref{int32_t(rp.rank), int32_t(i), -1};
    auto s = [&] { return std::to_string(op.stage); }; // only for messages
    if (op.stage >= 0)
      touch(op.stage);
    switch (op.kind) {
    case OpKind::Forward:
    case OpKind::Backward:
    case OpKind::BackwardWeight:
    case OpKind::LossGrad:
    case OpKind::Jacobian:
    case OpKind::Combine:
      checkCompute(rp, op, ref);
      break;
    case OpKind::ReleaseWeights:
      // rule: release-fetched
      if (weights_[size_t(op.stage)] != kFetched)
        fail(ref, "releases stage " + s() + "'s weights, which " + rankName(rp) +
                      " has not fetched");
      weights_[size_t(op.stage)] = kNone;
      break;
    case OpKind::OptimizerStep:
      checkOptimizerStep(rp, op, ref);
      break;
    case OpKind::TiedGrad:
      checkTiedGrad(rp, op, ref);
      break;
    case OpKind::ReduceGrad:
      // rule: reduce-root-owns
      if (!p_.ranks[size_t(op.root)].ownsStage(op.stage))
        fail(ref, describe(p_, op) + ": the root, rank " + std::to_string(op.root) +
                      ", does not own stage " + s());
      checkReduction(op, ref);
      trackGradient(rp, op, ref);
      break;
    case OpKind::AllreduceGrad:
      checkReduction(op, ref);
      trackGradient(rp, op, ref);
      break;
    case OpKind::Send:
    case OpKind::Recv:
    case OpKind::SendWeights:
    case OpKind::FetchWeights:
    case OpKind::Group:
      checkTransfers(rp, op, ref);
      break;
    }
  }
  checkGradients(rp);
}

// Forgets the previous rank's state: only the stages it touched, so that
// checking every rank costs O(ops), not O(ranks x stages).
void Validator::resetRank() {
  for (int s : touched_) {
    weights_[size_t(s)] = kNone;
    uses_[size_t(s)] = GradientUse();
  }
  touched_.clear();
  tiedAt_.assign(p_.ties.size(), -1);
}

void Validator::touch(int s) {
  if (!uses_[size_t(s)].touched) {
    uses_[size_t(s)].touched = true;
    touched_.push_back(s);
  }
}

// A job: its weights are owned or fetched, its inputs computed or received
// before; the loss gradient and the products use no weights.
void Validator::checkCompute(const RankProgram &rp, const Op &op, const OpRef &ref) {
  const int r = rp.rank;
  // rule: compute-weights
  if (op.kind != OpKind::LossGrad && op.kind != OpKind::Combine &&
      !rp.ownsStage(op.stage) && weights_[size_t(op.stage)] != kFetched)
    fail(ref, describe(p_, op) + " needs stage " + std::to_string(op.stage) +
                  "'s weights, which " + rankName(rp) + " neither owns nor fetched");
  // rule: compute-inputs
  for (int64_t id : rp.reads(op))
    if (holder_[size_t(id)] != r)
      fail(ref, describe(p_, op) + " needs " + describeTensor(p_, id) +
                    ", which no earlier op of " + rankName(rp) + " computes or receives");
  for (int64_t id : rp.writes(op))
    holder_[size_t(id)] = r;
  trackGradient(rp, op, ref);
}

// An optimizer step: on an owner, after the tied reduction of its stage.
void Validator::checkOptimizerStep(const RankProgram &rp, const Op &op, const OpRef &ref) {
  // rule: step-owner
  if (!rp.ownsStage(op.stage))
    fail(ref, describe(p_, op) + ": " + rankName(rp) + " does not own stage " +
                  std::to_string(op.stage));
  // rule: step-after-tied-grad
  if (int tie = p_.tieOf[size_t(op.stage)]; tie >= 0 && tiedAt_[size_t(tie)] < 0)
    fail(ref, describe(p_, op) + " is not preceded by " + rankName(rp) + "'s tied_grad (tie " +
                  std::to_string(tie) + "): stage " + std::to_string(op.stage) +
                  " would step without the summed gradient of its tied weight");
  trackGradient(rp, op, ref);
}

// A transfer or a group (a lone transfer is a group of one): sends need
// their tensor (or, for weights, ownership) before the group; receives and
// fetches land after it.
void Validator::checkTransfers(const RankProgram &rp, const Op &op, const OpRef &ref) {
  const int r = rp.rank;
  const bool group = op.kind == OpKind::Group;
  const Op *children = group ? rp.childrenOf(op) : &op;
  const uint32_t n = group ? op.count : 1;
  for (uint32_t c = 0; c < n; ++c) {
    const Op &x = children[c];
    OpRef cref = ref;
    if (group)
      cref.child = int32_t(c);
    auto xs = [&] { return std::to_string(x.stage); };
    // rule: send-tensor
    if (x.kind == OpKind::Send && holder_[size_t(x.tensor)] != r)
      fail(cref, describe(p_, x) + " needs " + describeTensor(p_, x.tensor) +
                     ", which no earlier op of " + rankName(rp) + " computes or receives");
    // rule: send-weights-owner
    if (x.kind == OpKind::SendWeights && !rp.ownsStage(x.stage))
      fail(cref, describe(p_, x) + ": " + rankName(rp) + " does not own stage " + xs());
    if (x.kind == OpKind::FetchWeights) {
      // rule: fetch-not-owned
      if (rp.ownsStage(x.stage))
        fail(cref, describe(p_, x) + ": " + rankName(rp) + " owns stage " + xs());
      // rule: fetch-once
      if (weights_[size_t(x.stage)] != kNone)
        fail(cref, describe(p_, x) + ": " + rankName(rp) +
                       " already holds a fetched copy (release it first)");
      weights_[size_t(x.stage)] = kPending;
      touch(x.stage);
    }
  }
  for (uint32_t c = 0; c < n; ++c) {
    const Op &x = children[c];
    if (x.kind == OpKind::FetchWeights)
      weights_[size_t(x.stage)] = kFetched;
    if (x.kind == OpKind::Recv)
      holder_[size_t(x.tensor)] = r;
  }
}

// The optimizer of a stage must see every weight gradient the rank adds:
// one optimizer_step per owner, after the rank's weight-gradient jobs and
// collectives on the stage. A weight gradient added after the rank's last
// collective on the stage (or on a rank that neither owns the stage nor
// takes part in one) would be silently lost.
void Validator::trackGradient(const RankProgram &rp, const Op &op, const OpRef &ref) {
  GradientUse &use = uses_[size_t(op.stage)];
  auto before = [&](const char *what) {
    const OpRef step{ref.rank, use.optimizerStep, -1};
    // rule: step-after-gradients
    fail(step, describe(p_, rp.ops[size_t(use.optimizerStep)]) + " comes before " +
                   describe(p_, op) + " at " + ref.str() + ", whose " + what +
                   " it would miss");
  };
  if (isWeightGradient(op.kind)) {
    if (use.optimizerStep >= 0)
      before("weight gradient");
    // rule: wgrad-before-tied-grad
    if (int tie = p_.tieOf[size_t(op.stage)]; tie >= 0 && tiedAt_[size_t(tie)] >= 0)
      fail(ref, describe(p_, op) + " adds to tied stage " + std::to_string(op.stage) +
                    "'s weight gradient after rank " + std::to_string(rp.rank) +
                    "'s tied_grad (" + OpRef{ref.rank, tiedAt_[size_t(tie)], -1}.str() +
                    "): its contribution would be lost");
    if (use.wgradSinceCollective < 0)
      use.wgradSinceCollective = ref.op;
  } else if (isCollective(op.kind)) {
    if (use.optimizerStep >= 0)
      before("summed gradient");
    // rule: reduce-before-tied-grad
    if (int tie = p_.tieOf[size_t(op.stage)]; tie >= 0 && tiedAt_[size_t(tie)] >= 0)
      fail(ref, describe(p_, op) + " reduces tied stage " + std::to_string(op.stage) +
                    "'s gradient after rank " + std::to_string(rp.rank) + "'s tied_grad (" +
                    OpRef{ref.rank, tiedAt_[size_t(tie)], -1}.str() +
                    "), which already replaced it with the tied sum");
    use.lastCollective = ref.op;
    use.wgradSinceCollective = -1;
  } else if (op.kind == OpKind::OptimizerStep) {
    // rule: step-once
    if (use.optimizerStep >= 0)
      fail(ref, describe(p_, op) + " runs twice on rank " + std::to_string(rp.rank) +
                    " (first at " + OpRef{ref.rank, use.optimizerStep, -1}.str() + ")");
    use.optimizerStep = ref.op;
  }
}

void Validator::checkGradients(const RankProgram &rp) {
  for (int s : touched_) {
    const GradientUse &use = uses_[size_t(s)];
    const bool afterLast = use.lastCollective >= 0;
    if (use.wgradSinceCollective < 0 || (!afterLast && rp.ownsStage(s)))
      continue;
    const OpRef ref{int32_t(rp.rank), use.wgradSinceCollective, -1};
    const std::string what = describe(p_, rp.ops[size_t(use.wgradSinceCollective)]);
    const std::string st = std::to_string(s);
    // rule: wgrad-before-last-collective
    if (afterLast)
      fail(ref, what + " adds to stage " + st + "'s weight gradient after " + rankName(rp) +
                    "'s last collective on it (" +
                    OpRef{ref.rank, use.lastCollective, -1}.str() +
                    "): its contribution would be lost");
    // rule: wgrad-reaches-step
    fail(ref, what + " computes stage " + st + "'s weight gradient on " + rankName(rp) +
                  ", which neither owns stage " + st +
                  " nor reduces its gradient in a collective: its contribution "
                  "would be lost");
  }
  for (int s : rp.owns)
    // rule: owner-runs-tied-grad
    if (int tie = p_.tieOf[size_t(s)]; tie >= 0 && tiedAt_[size_t(tie)] < 0)
      fail(OpRef{int32_t(rp.rank), -1, -1}.str() + ": " + rankName(rp) + " owns tied stage " +
           std::to_string(s) + " but runs no tied_grad (tie " + std::to_string(tie) +
           "): its copy of the tied weight would miss the other stages' gradients");
  for (int s : rp.owns)
    // rule: owner-steps
    if (uses_[size_t(s)].optimizerStep < 0)
      fail(OpRef{int32_t(rp.rank), -1, -1}.str() + ": " + rankName(rp) + " owns stage " +
           std::to_string(s) + " but runs no optimizer_step (s=" + std::to_string(s) +
           "): every owner applies the stage's gradient once per step");
  for (int s : rp.owns)
    checkReplicaReduced(rp, s);
}

// The owners of a stage hold replicas of its weights, which stay equal only
// if every owner steps with the same gradient: an all-reduce of the stage's
// gradient must include every owner (one left out, or one reducing alone,
// steps with another sum); a reduce gives the sum to its root alone, so
// its root must be the stage's only owner.
void Validator::checkReduction(const Op &op, const OpRef &ref) const {
  const std::vector<int> &owners = owners_[size_t(op.stage)];
  const std::vector<int> &members = p_.groups[size_t(op.group)];
  const std::string s = std::to_string(op.stage);
  // rule: allreduce-over-owners
  if (op.kind == OpKind::AllreduceGrad &&
      !std::includes(members.begin(), members.end(), owners.begin(), owners.end()))
    fail(ref, describe(p_, op) + ": the members must include every owner of stage " + s +
                  ", " + listString(owners) +
                  " (an owner left out would step with another gradient than the others)");
  // rule: reduce-single-owner
  if (op.kind == OpKind::ReduceGrad && owners.size() > 1)
    fail(ref, describe(p_, op) + ": stage " + s + " has " +
                  std::to_string(owners.size()) + " owners, " + listString(owners) +
                  ", and a reduce gives the summed gradient to its root alone: the "
                  "other owners would step without it (reduce a replicated stage with "
                  "allreduce_grad over its owners)");
}

// An owner of a replicated stage takes part in an all-reduce of its
// gradient (checkReduction: over every owner), else it steps with its own
// gradient alone.
void Validator::checkReplicaReduced(const RankProgram &rp, int s) const {
  const std::vector<int> &owners = owners_[size_t(s)];
  if (owners.size() < 2 || uses_[size_t(s)].lastCollective >= 0)
    return;
  // rule: replicas-reduced
  fail(OpRef{int32_t(rp.rank), -1, -1}.str() + ": rank " + std::to_string(rp.rank) +
       " owns stage " + std::to_string(s) + " with the ranks " + listString(owners) +
       " but reduces no gradient of it: its replica would step with its own gradient "
       "alone (an allreduce_grad over the owners keeps the replicas equal)");
}

const Validator::TieOwners &Validator::tieOwners(int tie) {
  if (tieOwners_.empty())
    tieOwners_.resize(p_.ties.size());
  std::optional<TieOwners> &known = tieOwners_[size_t(tie)];
  if (known)
    return *known;
  const std::vector<int> &stages = p_.ties[size_t(tie)];
  TieOwners result;
  for (const RankProgram &other : p_.ranks) {
    int owned = 0;
    for (int s : stages)
      owned += other.ownsStage(s);
    if (owned > 0)
      result.owners.push_back(other.rank);
    result.everyOwnerOwnsAll =
        result.everyOwnerOwnsAll && (owned == 0 || owned == int(stages.size()));
  }
  return *(known = std::move(result));
}

// A tied reduction: once per rank and tie; its members are every owner of
// the tie's stages, or the rank alone where every such owner owns every
// stage of the tie (each then holds all of the tensor's gradients); after
// the gradient reductions of the stages the rank owns (a later one fails
// reduce-before-tied-grad), before their steps (an earlier step fails
// step-after-tied-grad: a stage has one tie, so no step can come between).
void Validator::checkTiedGrad(const RankProgram &rp, const Op &op, const OpRef &ref) {
  // rule: tied-grad-once
  if (tiedAt_[size_t(op.tie)] >= 0)
    fail(ref, describe(p_, op) + " runs twice on " + rankName(rp) + " (first at " +
                  OpRef{ref.rank, tiedAt_[size_t(op.tie)], -1}.str() + ")");
  tiedAt_[size_t(op.tie)] = ref.op;
  const auto &[owners, everyOwnerOwnsAll] = tieOwners(op.tie);
  const std::vector<int> &members = p_.groups[size_t(op.group)];
  const bool local = members.size() == 1 && everyOwnerOwnsAll;
  // rule: tied-grad-members
  if (members != owners && !local)
    fail(ref, describe(p_, op) + ": the members must be the owners of the tied stages, " +
                  listString(owners) +
                  (everyOwnerOwnsAll ? " (or the rank alone: each owns every one)" : ""));
}

// Tags are unique per message in a step (both ends carry the same, which
// the matching checks) and fit the transport.
void Validator::checkTags() const {
  std::unordered_map<int64_t, OpRef> tags;
  for (const RankProgram &rp : p_.ranks)
    for (size_t i = 0; i < rp.ops.size(); ++i) {
      const Op &op = rp.ops[i];
      const bool group = op.kind == OpKind::Group;
      const Op *children = group ? rp.childrenOf(op) : &op;
      const uint32_t n = group ? op.count : 1;
      for (uint32_t c = 0; c < n; ++c) {
        const Op &x = children[c];
        if (!isPointToPoint(x.kind) || !isOutgoing(x.kind))
          continue;
        const OpRef ref{int32_t(rp.rank), int32_t(i), group ? int32_t(c) : -1};
        // rule: tag-fits
        if (x.tag > options_.maxTag)
          fail(ref, "tag " + std::to_string(x.tag) +
                        " exceeds the transport's largest tag " +
                        std::to_string(options_.maxTag));
        auto [it, fresh] = tags.emplace(x.tag, ref);
        // rule: tag-unique
        if (!fresh)
          fail(ref, describe(p_, x) + " reuses tag " + std::to_string(x.tag) + " of " +
                        it->second.str() + " (tags are unique per message in a step)");
      }
    }
}

// Every collective group is some collective's members: a per-rank index
// lists them (and the loader of all the rank files checks them too); one
// listing others is from another compile. A single document's groups are
// its collectives' members.
void Validator::checkGroupsUsed() const {
  std::vector<char> used(p_.groups.size(), 0);
  for (const RankProgram &rp : p_.ranks)
    for (const Op &op : rp.ops)
      if (isCollective(op.kind))
        used[size_t(op.group)] = 1;
  for (size_t g = 0; g < used.size(); ++g)
    // rule: group-used
    if (!used[g])
      fail("collective_groups[" + std::to_string(g) + "] " + listString(p_.groups[g]) +
           ": no collective op of any rank has these members");
}

} // namespace

void validate(const Program &program, const ValidateOptions &options) {
  Validator(program, options).run();
}

void validateRank(const Program &program, int rank, const ValidateOptions &options) {
  Validator(program, options).runRank(rank);
}

} // namespace pipesched::runtime
