//===- SearchSpace.h - the schedules --sched-search tries -------*- C++ -*-===//
//
// The dialect side of the search (lib/Scheduling/Search is the algorithm):
// which specs a step's shape admits, a lower bound of each from its
// placement, and its simulation through the same phases the passes run.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_SEARCHSPACE_H
#define PIPESCHED_TRANSFORMS_SEARCHSPACE_H

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/ExplicitSchedule.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace pipesched {

/// One schedule of the space: a strategy, or a placement map of no named
/// strategy, and optionally the priority and cap that replace the
/// strategy's own.
struct SearchCandidate {
  sched::StrategyAttrInterface strategy; ///< null: `compute` places jobs
  mlir::AffineMap compute;               ///< w_compute = w_weights, or null
  mlir::Attribute priority;              ///< null: the strategy's own
  sched::MemoryCapAttr cap;              ///< null: the strategy's own
  sched::NodesAttr nodes;                ///< null: the spec's own

  /// What places the jobs: the strategy or the map (equal schedules of one
  /// such family rank once).
  mlir::Attribute family() const;
};

/// The search problem of a spec step (shape, per-stage durations, stage
/// graph, overlap ratio); the memory limit is the caller's.
scheduling::SearchProblem buildSearchProblem(sched::StepOp spec);

/// Every candidate the spec's shape admits (each verifies as a step), in a
/// fixed order: named strategies with their own priorities first, then each
/// placement (the strategies', and the skewed map (s + b) mod W that no
/// framework ships) under every affine priority, without a cap and with a cap at
/// the problem's memory limit (in bytes: per worker, what its weights
/// leave for activations). A spec with nodes also gets every candidate on
/// the other mappings of its workers to as many nodes: contiguous ranks
/// (each pipeline's neighbours and each LPP ring together) and strided.
std::vector<SearchCandidate>
enumerateCandidates(sched::StepOp spec, const scheduling::SearchProblem &problem);

/// The bytes of weights each worker holds under the candidate: one copy of
/// every stage it owns (w_weights) and, when it computes a stage it does not
/// own, two fetched copies (the one in use and the next, prefetched).
std::vector<int64_t> heldWeightBytes(sched::StepOp spec,
                                     const SearchCandidate &candidate);

/// Gives `step` the candidate's scheme: strategy, priority and cap (the
/// step's own maps, priority and cap are dropped).
void applyCandidate(sched::StepOp step, const SearchCandidate &candidate);

/// The candidate's compute worker of every job, by jobCoordIndex.
std::vector<int32_t> candidateWorkers(sched::StepOp spec,
                                      const SearchCandidate &candidate);

/// Simulates the candidate on a copy of `spec` located at `loc` (expand,
/// place, simulate, as the passes do): latency, peak live activations and
/// peak bytes (activations at the cost's `act` plus `heldBytes`, the
/// candidate's heldWeightBytes), or the error. The phases' diagnostics are emitted at `loc` (the caller
/// captures them); a stuck simulation's reason is in `error`.
scheduling::CandidateResult evaluateCandidate(sched::StepOp spec,
                                              const SearchCandidate &candidate,
                                              llvm::ArrayRef<int64_t> heldBytes,
                                              mlir::Location loc,
                                              int64_t maxJobs);

/// Gives `step` (a spec) a schedule placed job by job (ExplicitSchedule.h):
/// every job expanded, on its worker with its weights there, in its
/// worker's order, under a cap of the problem's memory limit; the strategy,
/// maps and priority dropped.
llvm::LogicalResult applyExplicitSchedule(sched::StepOp step,
                                          const scheduling::SearchProblem &problem,
                                          const scheduling::ExplicitSchedule &schedule,
                                          int64_t maxJobs);

/// Simulates a copy of `spec` with the schedule applied, as
/// evaluateCandidate does (no weights counted in the bytes).
scheduling::CandidateResult
evaluateExplicitSchedule(sched::StepOp spec,
                         const scheduling::SearchProblem &problem,
                         const scheduling::ExplicitSchedule &schedule,
                         mlir::Location loc, int64_t maxJobs);

/// The candidate's rank programs replayed (ProgramReplay.h) after lowering
/// with `prefetchDepth`, as --sched-lower-ranks records them: transfers as
/// rendezvous, weight fetches by the link, reductions and optimizer steps
/// timed from the cost. Fails when a phase does (its diagnostic at `loc`).
llvm::FailureOr<int64_t> replayCandidate(sched::StepOp spec,
                                         const SearchCandidate &candidate,
                                         mlir::Location loc, int64_t maxJobs,
                                         int64_t prefetchDepth);

/// A lower bound as JSON: value, binding and each bound (--sched-search and
/// --sched-stats print the same object).
llvm::json::Object lowerBoundJson(const scheduling::LowerBound &bound);

/// The candidate as the spec's syntax: `strategy ... [priority ...] [cap ...]`.
void printCandidate(llvm::raw_ostream &os, const SearchCandidate &candidate);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_SEARCHSPACE_H
