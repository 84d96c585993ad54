//===- DeadlockCheck.h - abstract execution of rank programs ----*- C++ -*-===//
//
// Dialect-free: executes per-rank programs abstractly with rendezvous
// semantics and either proves that every rank reaches its end or returns
// the ranks that wait on each other.
//
// Semantics. Local steps (compute, release, optimizer) complete at once. A
// group of point-to-point operations (a single send or receive is a group
// of one) is posted as a whole and completes when each of its operations
// has met its counterpart: per ordered pair of ranks (a, b), the k-th send
// from a to b meets the k-th receive on b from a (NCCL's rule). Met
// operations must agree on payload (what, stage, microbatch, tag, bytes).
// A collective step completes when every member has reached it; the k-th
// collective of each member over one member set forms one instance, whose
// members must agree on payload and root.
//
// Complexity: O(total operations) time and memory.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_DEADLOCKCHECK_H
#define PIPESCHED_SCHEDULING_DEADLOCKCHECK_H

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// What a message or a collective carries: one vocabulary for every proof
/// of the same programs (CommPlan::verify on the plan,
/// --sched-verify-deadlock-free on rank IR, the runtime's matching.cpp on
/// the bytes). The tensor kinds have program::TensorKind's values.
enum class PayloadKind : int32_t {
  Activation = 0,
  Gradient = 1,
  Scan = 2,
  Weights = 3,
  AllReduce = 4,
  Reduce = 5,
  Tied = 6,
};

/// What a message or a collective carries; compared field by field.
struct Payload {
  PayloadKind what = PayloadKind::Activation;
  int64_t stage = 0, microbatch = 0, tag = 0, bytes = 0, root = -1;
  bool operator==(const Payload &o) const {
    return what == o.what && stage == o.stage && microbatch == o.microbatch &&
           tag == o.tag && bytes == o.bytes && root == o.root;
  }
};

struct CommOp {
  bool isSend = true;
  int32_t peer = 0;
  Payload payload;
  uint32_t id = 0; ///< the caller's identifier (for diagnostics)
};

struct ProgramStep {
  enum Kind { Local, Group, Collective } kind = Local;
  std::vector<CommOp> ops;       ///< Group: its operations
  std::vector<int32_t> members;  ///< Collective: sorted member ranks
  Payload payload;               ///< Collective: what it reduces
  uint32_t id = 0;               ///< the caller's identifier of the step
};

using RankProgram = std::vector<ProgramStep>;

/// Why a blocked rank cannot go on.
struct Wait {
  int32_t rank = 0;
  uint32_t stepId = 0; ///< the step it is blocked in
  uint32_t opId = 0;   ///< the operation still unmet (the step for collectives)
  int32_t waitsFor = 0; ///< the rank whose counterpart is missing
  bool peerFinished = false; ///< that rank ended without posting it
};

struct DeadlockResult {
  enum Status { Ok, Mismatch, Deadlock } status = Ok;
  /// Mismatch: the two operations (or collective steps) that met, and the
  /// first differing field ("stage", "bytes", ...).
  uint32_t first = 0, second = 0;
  std::string field;
  /// Deadlock: a cycle of waiting ranks when there is one (waits[i] waits
  /// for waits[i+1].rank, the last for the first), else every blocked rank.
  std::vector<Wait> waits;
  bool cycle = false;
};

DeadlockResult checkDeadlockFree(const std::vector<RankProgram> &ranks);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_DEADLOCKCHECK_H
