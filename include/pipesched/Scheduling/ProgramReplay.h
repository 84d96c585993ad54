//===- ProgramReplay.h - timing the rank programs themselves ----*- C++ -*-===//
//
// Dialect-free: runs the rank programs of a communication plan on a clock,
// with the semantics the runtimes give them, and reports when each rank
// finishes. The list scheduler (ListScheduler.h) times jobs: a transfer
// only delays its consumer. The programs are stricter: a group of
// point-to-point operations is posted as a whole and completes when every
// one of its messages has moved, and a message moves only once both ends
// have posted it (NCCL's rendezvous, MPI's for messages past the eager
// limit). A sender whose receiver is still computing waits for it; the
// replay sees that, the job simulation does not. It is the step time a
// calibrated cost predicts (docs/calibration.md).
//
// Semantics, per rank, in program order, from time 0:
//  - a job takes its duration (ReplayCosts::durations, by default its
//    simulated one, end - start);
//  - a group posts every operation at the rank's time t; a message of b
//    bytes completes at max(send post, receive post) + message(b); the
//    group ends at its last message's completion;
//  - a reduction starts when its last member arrives and takes
//    collective(bytes, members) on every member;
//  - an optimizer step takes the cost's time for its stage; a release is
//    free.
//
// Complexity: O(total operations) time and memory.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_PROGRAMREPLAY_H
#define PIPESCHED_SCHEDULING_PROGRAMREPLAY_H

#include "pipesched/Scheduling/CommPlan.h"

#include <string>
#include <vector>

namespace pipesched::scheduling {

/// What communication and optimizer steps cost, in ticks.
struct ReplayCosts {
  /// A message of b bytes takes latency + b * perByte; when perByte < 0
  /// (no link model, abstract ticks) every message takes `transfer`.
  double latency = 0, perByte = -1, transfer = 0;
  /// Per stage; empty: optimizer steps are free.
  std::vector<double> optimizer;
  /// Per job of the problem: how long the runtime takes to run it; empty:
  /// its simulated duration (end - start). They differ for DualPipe's
  /// overlapped pairs, which the simulator runs as one job of the pair's
  /// time and the runtimes as the forward, then the backward's halves, with
  /// the pair's transfers in between.
  std::vector<double> durations;
  /// A measured all-reduce: `reduce` ticks for `reduceBytes`, scaled by
  /// size (a reduce onto one root: half); reduceBytes 0: the ring below.
  double reduce = 0;
  int64_t reduceBytes = 0;

  /// The node of each worker (empty: one node), and the link between
  /// nodes, modelled as the one above.
  std::vector<int64_t> nodeOf;
  double interLatency = 0, interPerByte = -1, interTransfer = 0;

  double message(int64_t bytes) const;
  /// A message from `sender` to `receiver`: over the link between nodes
  /// when they are on different nodes.
  double messageBetween(int64_t bytes, int32_t sender, int32_t receiver) const;
  /// The measured all-reduce scaled by size when there is one; else a ring
  /// all-reduce over n members (2(n-1) steps of bytes/n each) or a reduce
  /// onto one root (n-1 steps); `transfer` without a link model.
  double collective(int64_t bytes, size_t members, bool allReduce) const;
  /// A collective of `members`: collective() inside one node; across nodes
  /// (a link model, no measured all-reduce) the faster of a flat ring,
  /// whose every step waits for the link between nodes, and NCCL's
  /// hierarchical form: a reduce inside each node, a ring over the nodes,
  /// a broadcast inside each node (docs/calibration.md).
  double collectiveOver(int64_t bytes, const std::vector<int32_t> &members,
                        bool allReduce) const;
  /// Every figure finite and non-negative (perByte may be < 0: none).
  std::string check() const;
  /// Job i's duration: durations[i], or its simulated one.
  double duration(const CommProblem &problem, size_t i) const {
    return durations.empty()
               ? double(problem.jobs[i].end - problem.jobs[i].start)
               : durations[i];
  }
};

struct ReplayResult {
  std::vector<double> finish;           ///< per worker
  std::vector<double> jobStart, jobEnd; ///< per job of the problem
  double makespan = 0;
  /// Non-empty when the programs cannot run to the end (a plan that fails
  /// CommPlan::verify): the ranks still waiting.
  std::string error;

  /// Jobs in program order on each worker, no overlap, each job's duration
  /// kept, makespan the latest finish. Empty string or the first violation.
  std::string verify(const CommProblem &problem, const CommPlan &plan,
                     const ReplayCosts &costs) const;
};

/// Replays `plan` (which passes CommPlan::verify) of `problem`.
ReplayResult replayPrograms(const CommProblem &problem, const CommPlan &plan,
                            const ReplayCosts &costs);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_PROGRAMREPLAY_H
