//===- CommPlan.h - transfers, fetches and reductions of a schedule -*- C++ -*-===//
//
// Dialect-free: from a placed, simulated job graph, derives every worker's
// program: its jobs in simulated order with the communication around them.
//
// Program points. Worker w's program has a point before each of its jobs
// (at the job's simulated start) and one after the last. Communication is
// attached to points:
//  - a message for every tensor a job consumes on another worker than the
//    one that made it (once per receiving worker), posted at its production
//    time t: the sender at its first point at or after t (after the
//    producer), the receiver at its first point at or after t (and no later
//    than its first consumer);
//  - where a job's weights live on another worker, a weight message
//    `prefetchDepth` jobs ahead of the run of consecutive jobs of that stage
//    that use them, and a release after the run;
//  - per stage, after its last weight-gradient job, a reduction over every
//    worker that owns its weights or computed a gradient of it (an
//    all-reduce with several owners, a reduce onto the single owner
//    otherwise), then an optimizer step on every owner;
//  - per group of tied stages (stages sharing one weight tensor), after the
//    reductions of its stages, a tied reduction over the owners of the
//    group's stages (local on an owner that owns every stage of the group),
//    and only then the optimizer steps of those stages.
//
// Order. Every worker meets its communication in one global order of keys
// (time, class, id): both ends of a message share a key, all members of a
// reduction too, and points are monotone in time. So no worker can wait on
// one that waits for something later: the programs are deadlock-free by
// construction (verify() proves it with the abstract execution of
// DeadlockCheck.h). Consecutive point-to-point operations of a worker form
// one group, posted and completed together.
//
// Complexity: O(J log J + M log M) for J jobs and M messages.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_COMMPLAN_H
#define PIPESCHED_SCHEDULING_COMMPLAN_H

#include "pipesched/Scheduling/DeadlockCheck.h"
#include "pipesched/Scheduling/Direction.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// One placed, simulated job.
struct PlannedJob {
  int32_t worker = 0;  ///< w_compute
  int32_t owner = 0;   ///< w_weights
  int64_t stage = 0, microbatch = 0;
  Direction direction = Direction::Forward;
  int64_t start = 0, end = 0; ///< simulated times
  int64_t position = 0;       ///< index in its worker's order
  /// Bytes of its output when sent; -1: the problem's actBytes.
  int64_t outputBytes = -1;
};

/// The input of the planner.
struct CommProblem {
  int32_t numWorkers = 1;
  int64_t numStages = 1;
  std::vector<PlannedJob> jobs;
  /// Data edges: job i consumes the outputs of jobs
  /// inputs[inputBegin[i] .. inputBegin[i+1]), in operand order.
  std::vector<uint32_t> inputBegin, inputs;
  /// Which direction computes weight gradients (BackwardWeight when split).
  Direction gradientJob = Direction::Backward;
  int64_t prefetchDepth = 1;
  int64_t actBytes = 0, weightBytes = 0;
  /// Groups of stages that share one weight tensor (each of at least two
  /// distinct stages, no stage in two groups).
  std::vector<std::vector<int64_t>> tiedGroups;

  /// Checks the input: workers and stages in range, positions a
  /// permutation per worker, times ordered, edges in range and respected by
  /// the times. Returns an empty string or the first problem found.
  std::string check() const;
};

/// A point-to-point message.
struct Message {
  /// What it carries, in the deadlock check's words (one of the first four).
  using Kind = PayloadKind;
  static constexpr Kind Activation = PayloadKind::Activation,
                        Gradient = PayloadKind::Gradient,
                        Weights = PayloadKind::Weights,
                        Scan = PayloadKind::Scan;
  Kind kind;
  int32_t sender, receiver;
  int64_t stage, microbatch; ///< microbatch -1 for weights
  uint32_t producer;         ///< the job whose output is sent (not weights)
  int64_t tag, bytes;
};

/// A gradient reduction of one stage.
struct Reduction {
  int64_t stage;
  std::vector<int32_t> members; ///< sorted
  std::vector<int32_t> owners;  ///< sorted; a reduce's root when one
  int64_t bytes;
  bool isAllReduce() const { return owners.size() > 1; }
};

/// The gradient reduction of a tied weight: sums the tensor's gradient over
/// `members` (the owners of the group's stages; one member: an owner of
/// every stage of the group, which sums locally).
struct TiedReduction {
  int64_t tie;                  ///< index into CommProblem::tiedGroups
  std::vector<int32_t> members; ///< sorted
  int64_t bytes;
};

/// One entry of a worker's program.
struct PlanOp {
  enum Kind : uint8_t {
    Job,            ///< index: the job
    Send,           ///< index: the message (sender side)
    Recv,           ///< index: the message (receiver side)
    ReleaseWeights, ///< index: the stage
    Collective,     ///< index: the reduction (only with several members)
    OptimizerStep,  ///< index: the reduction
    TiedGrad,       ///< index: the tied reduction
  } kind;
  uint32_t index;
  /// Point-to-point ops of one group share an id >= 0 (per worker).
  int32_t group = -1;
};

struct CommPlan {
  std::vector<Message> messages;      ///< in tag order
  std::vector<Reduction> reductions;  ///< in the global collective order
  std::vector<TiedReduction> tied;    ///< in tie order
  std::vector<std::vector<PlanOp>> programs;  ///< per worker
  std::vector<std::vector<int64_t>> owns;     ///< per worker, sorted stages

  /// Checks the plan against its problem: every job once on its worker in
  /// position order, each message once at each end, every input local
  /// (made or received earlier) where it is consumed, fetched weights held
  /// where used, one optimizer step per owner and stage after its
  /// reduction, and the programs deadlock-free. Empty string or the first
  /// violation.
  std::string verify(const CommProblem &problem) const;
};

/// Plans the communication of `problem`, which must pass check().
CommPlan planCommunication(const CommProblem &problem);

/// Bytes each worker sends and receives under a plan (point-to-point
/// messages; a reduction counts its payload once per member other than the
/// root or, for an all-reduce, once per member), saturating at INT64_MAX.
/// One accounting for the lowering and the statistics.
struct Traffic {
  std::vector<int64_t> sentBytes, receivedBytes;
  std::vector<int64_t> activationsReceived, gradientsReceived,
      weightFetches, scanReceived;
  /// Tied reductions with at least two members that the worker takes part
  /// in, and their bytes (the cost's `weights` each).
  std::vector<int64_t> tiedReductions, tiedBytes;
  /// Messages received from another node, and their bytes.
  std::vector<int64_t> interNodeReceived, interNodeBytes;
};
/// `nodeOf`: the node of each worker (empty: one node).
Traffic accountTraffic(const CommProblem &problem, const CommPlan &plan,
                       const std::vector<int64_t> &nodeOf = {});

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_COMMPLAN_H
