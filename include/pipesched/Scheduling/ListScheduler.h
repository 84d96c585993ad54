//===- ListScheduler.h - event-driven multi-worker list scheduling -*- C++ -*-===//
//
// Dialect-free: plain C++ data, unit-testable without MLIR. The passes
// convert a `sched.step` into a `JobGraph`, run `simulate`, and write the
// `Timeline` back as attributes.
//
// Semantics. Each worker runs at most one job at a time, without preemption.
// A job is ready when all its predecessors have finished, plus
// `transferTime` for each predecessor that ran on another worker (the
// inter-node time when the two workers are on different nodes; the latest
// such arrival counts). When a worker is idle and has ready jobs, it starts
// the ready job with the smallest (priority, index) pair, where index is the
// job's position in `JobGraph::jobs`: ties are broken deterministically.
// Events at equal times are processed so that every job finishing at time t
// makes its successors ready before any worker picks a job at time t.
//
// Memory. A job may `acquire` activation memory on its worker when it starts
// (a forward storing its input activation for its backward) and a later job
// `release` it when it finishes (that backward), all of it or a part: with
// a split backward, B frees what W does not need and W the rest (the Zero
// Bubble paper's M_B and M_W). With a cap on a worker, a
// job that acquires is not started while `live + acquire > cap`; it stays
// ready and the worker picks another ready job, or idles until a release.
// Peak live memory is tracked per worker in units and in bytes.
//
// Explicit order. If `JobGraph::order` is non-empty, each worker runs its
// jobs exactly in the given order (an imported schedule, or one the search
// placed job by job): a worker waits for its next job to be ready even if
// others are, and, under a cap, for room for what it acquires; priorities
// are ignored.
//
// Complexity: O(J log J + E) time and O(J + E) memory for J jobs, E edges.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_LISTSCHEDULER_H
#define PIPESCHED_SCHEDULING_LISTSCHEDULER_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// One job of the graph.
struct Job {
  int32_t worker = 0;       ///< w_compute, in [0, numWorkers)
  int64_t duration = 0;     ///< >= 0
  int64_t priority = 0;     ///< smaller first
  int64_t acquire = 0;      ///< memory units taken on `worker` at start
  int64_t acquireBytes = 0; ///< the same memory in bytes (reporting only)
  /// Index of the job whose memory this job frees when it finishes (the
  /// forward whose activation this backward consumed), or -1. The amount
  /// freed is on that job's worker: all of its acquire/acquireBytes, or
  /// the part below.
  int64_t releases = -1;
  /// The part freed, in units and bytes; -1: all of it. Several jobs may
  /// each free a part of one job's memory, never more than it acquired.
  int64_t releaseUnits = -1, releaseBytes = -1;
};

/// A DAG of jobs in compressed sparse row form.
struct JobGraph {
  int32_t numWorkers = 1;
  std::vector<Job> jobs;
  /// Predecessors of job i are preds[predBegin[i] .. predBegin[i+1]).
  /// predBegin has jobs.size() + 1 entries.
  std::vector<uint32_t> predBegin;
  std::vector<uint32_t> preds;
  /// Optional explicit per-worker order: order[w] lists the job indices
  /// worker w runs, first to last. Empty = scheduled by priority.
  std::vector<std::vector<uint32_t>> order;

  /// Appends a job whose predecessors are `jobPreds` (any indices; they need
  /// not precede it) and returns its index. predBegin is kept up to date.
  uint32_t addJob(const Job &job, const std::vector<uint32_t> &jobPreds);
};

struct SimulationOptions {
  /// Added to a predecessor's end time when it ran on another worker.
  int64_t transferTime = 0;
  /// Memory cap per worker in acquire units; empty = no cap. Otherwise it
  /// has numWorkers entries (a negative entry = no cap on that worker).
  std::vector<int64_t> memoryCap;
  /// The node of each worker (empty: one node), and the transfer time
  /// between workers of different nodes.
  std::vector<int64_t> nodeOf;
  int64_t interNodeTransferTime = 0;

  /// The time an input made on worker `from` takes to reach worker `to`.
  int64_t transferBetween(int32_t from, int32_t to) const {
    if (from == to)
      return 0;
    bool crossesNodes = !nodeOf.empty() && nodeOf[size_t(from)] != nodeOf[size_t(to)];
    return crossesNodes ? interNodeTransferTime : transferTime;
  }
};

struct Timeline {
  std::vector<int64_t> start, end; ///< per job
  std::vector<int64_t> position;   ///< per job: index in its worker's order
  std::vector<std::vector<uint32_t>> workerOrder; ///< jobs per worker, in run order
  int64_t makespan = 0;
  std::vector<int64_t> busy;          ///< per worker: sum of durations
  std::vector<int64_t> peakLive;      ///< per worker: peak acquire units
  std::vector<int64_t> peakLiveBytes; ///< per worker: peak bytes
};

/// The result of a simulation: a timeline, or why none exists.
struct SimulationResult {
  std::optional<Timeline> timeline;
  /// When no timeline: a message naming the stuck workers and the job each
  /// waits on (e.g. "worker 1 waits for job 7 (not ready: needs job 3)"),
  /// or the invalid input (cycle, worker out of range, cap below a job's
  /// acquire).
  std::string error;
  /// Indices of jobs involved in the error (for located diagnostics).
  std::vector<uint32_t> blockedJobs;
};

/// Runs the event-driven list scheduler described above.
SimulationResult simulate(const JobGraph &graph,
                          const SimulationOptions &options = {});

/// Live activation memory along a timeline: each job's `acquire` is live on
/// its worker from its start until the job that `releases` it ends (to the
/// end of the step if none does); releases at time t come before
/// acquisitions at t. Peaks per worker in units and bytes, saturating at
/// INT64_MAX instead of overflowing. The one accounting behind the
/// simulator's caps (checked by verifyTimeline) and --sched-stats.
struct LiveMemory {
  std::vector<int64_t> peak, peakBytes; ///< per worker
};
LiveMemory accountLiveMemory(const JobGraph &graph,
                             const std::vector<int64_t> &start,
                             const std::vector<int64_t> &end);

/// Checks a timeline against its graph and options: every job in exactly
/// one worker's order at its position, `end - start == duration`, a job
/// starts after each predecessor ends (plus transferTime across workers),
/// a worker runs one job at a time in its order, the memory caps hold,
/// and makespan, busy and peak figures
/// match. Returns an empty string or the first violation.
std::string verifyTimeline(const JobGraph &graph,
                           const SimulationOptions &options,
                           const Timeline &timeline);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_LISTSCHEDULER_H
