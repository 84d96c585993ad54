//===- Place.cpp - evaluate the placement maps on every job ---------------===//
//
// Sets w_compute and w_weights on every job from the step's scheme and, for
// a static-order priority, each worker's order from the generator
// (lib/Scheduling/Priorities.h).
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

#include "mlir/IR/Builders.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDPLACE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sim = pipesched::scheduling;

/// Evaluates the scheme on every job that lacks a worker.
static LogicalResult placeJobs(StepOp step) {
  FailureOr<Scheme> scheme = resolveScheme(step);
  if (failed(scheme))
    return failure();
  int64_t numWorkers = step.getWorkers();
  PlacementTable compute(scheme->compute, step.getStages()),
      weights(scheme->weights, step.getStages());
  // Returns the worker `map` gives `job`, or a diagnostic naming the job.
  auto evaluate = [&](JobOpInterface job, const PlacementTable &map,
                      StringRef role) -> FailureOr<int64_t> {
    int64_t worker = map(job.getStageIndex(), job.getMicrobatchIndex(),
                         job.getDirection());
    if (worker >= 0 && worker < numWorkers)
      return worker;
    return job->emitOpError()
           << role << " maps " << describeJob(job) << " to worker " << worker
           << ", outside [0, " << numWorkers << ")";
  };
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    // A placement written by hand wins.
    if (!job.getComputeWorker()) {
      FailureOr<int64_t> worker = evaluate(job, compute, "w_compute");
      if (failed(worker))
        return failure();
      job.setComputeWorker(*worker);
    }
    // A product of the scan, or the loss gradient, uses no weights.
    if (!job.getWeightsWorker() && !isa<LossGradOp, CombineOp>(op)) {
      FailureOr<int64_t> worker = evaluate(job, weights, "w_weights");
      if (failed(worker))
        return failure();
      job.setWeightsWorker(*worker);
    }
  }
  return success();
}

/// Writes the static order `order` as each job's `order`: a worker's jobs
/// sorted by their position in the generator's sequence (then by stage,
/// microbatch and direction, for placements the generator did not make).
static LogicalResult writeStaticOrder(StepOp step,
                                      const ResolvedPriority &priority) {
  sim::OrderShape shape;
  shape.stages = step.getStages();
  shape.microbatches = step.getMicrobatches();
  shape.workers = step.getWorkers();
  shape.splitBackward = step.getCostOrDefault().isSplitBackward();
  shape.group = priority.group;
  CostAttr cost = step.getCostOrDefault();
  shape.forwardCost = cost.getDuration(0, Direction::Forward);
  shape.inputCost = cost.getDuration(0, Direction::Backward);
  shape.weightCost = cost.getDuration(0, Direction::BackwardWeight);
  shape.commCost = cost.getTransfer();
  if (cost.hasActivationParts()) {
    shape.activationBytes = cost.getActBytes();
    shape.keptBytes = cost.getWeightHalfActBytes();
  }
  if (std::string error = sim::checkStaticOrder(*priority.order, shape);
      !error.empty())
    return step.emitOpError() << "priority cannot be generated: " << error;
  sim::WorkerOrders orders = sim::generateStaticOrder(*priority.order, shape);
  if (std::string error = sim::verifyStaticOrder(shape, orders);
      !error.empty())
    return step.emitOpError() << "generated order is invalid: " << error;
  std::vector<int64_t> position = sim::staticPositions(shape, orders);
  // Overlapped forwards and whole backwards (DualPipeV), by job index.
  int64_t perPairJobs = step.getJobsPerPair();
  std::vector<uint8_t> overlapped(position.size(), 0), whole(position.size(), 0);
  // The worker each job has in the generator's sequences.
  std::vector<int64_t> generatorWorker(position.size(), -1);
  for (auto [worker, list] : llvm::enumerate(orders))
    for (const sim::JobCoord &job : list) {
      size_t index = size_t(sim::jobCoordIndex(shape.microbatches, perPairJobs, job));
      overlapped[index] = job.overlapped;
      whole[index] = job.whole;
      generatorWorker[index] = int64_t(worker);
    }

  int64_t perPair = step.getJobsPerPair();
  struct Entry {
    int64_t position, index;
    JobOpInterface job;
  };
  std::vector<std::vector<Entry>> perWorker(size_t(shape.workers));
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    sim::JobCoord coord{job.getStageIndex(), job.getMicrobatchIndex(),
                        toSchedulingDirection(job.getDirection())};
    int64_t index = sim::jobCoordIndex(shape.microbatches, perPair, coord);
    // A static order is a sequence per worker of its own placement: on
    // another placement its positions mean nothing.
    if (generatorWorker[size_t(index)] != *job.getComputeWorker())
      return job->emitOpError()
             << "the static order '"
             << stringifyPriorityPolicy(priority.policy) << "' runs "
             << describeJob(job) << " on worker "
             << generatorWorker[size_t(index)] << ", but w_compute places it on worker "
             << *job.getComputeWorker()
             << ": use the order's own placement (its strategy) or a "
                "priority key";
    perWorker[size_t(*job.getComputeWorker())].push_back(
        {position[size_t(index)], index, job});
    if (auto forward = dyn_cast<ForwardOp>(op))
      forward.setOverlapped(overlapped[size_t(index)]);
    else if (auto backward = dyn_cast<BackwardOp>(op))
      backward.setWhole(whole[size_t(index)]);
  }
  for (std::vector<Entry> &jobs : perWorker) {
    llvm::sort(jobs, [](const Entry &a, const Entry &b) {
      return std::tie(a.position, a.index) < std::tie(b.position, b.index);
    });
    for (auto [k, entry] : llvm::enumerate(jobs))
      entry.job.setOrderIndex(int64_t(k));
  }
  return success();
}

LogicalResult pipesched::placeStep(StepOp step) {
  auto jobs = step.getBody().front().getOps<JobOpInterface>();
  // A graph placed entirely by hand (an imported schedule) needs no scheme.
  bool needsPlacement = llvm::any_of(jobs, [](JobOpInterface job) {
    return !job.getComputeWorker() ||
           (!job.getWeightsWorker() &&
            !isa<LossGradOp, CombineOp>(job.getOperation()));
  });
  if (needsPlacement && failed(placeJobs(step)))
    return failure();

  ResolvedPriority priority = resolvePriority(step);
  bool needsOrder = priority.order && llvm::any_of(jobs, [](JobOpInterface job) {
                      return !job.getOrderIndex();
                    });
  if (needsOrder && failed(writeStaticOrder(step, priority)))
    return failure();
  return success();
}

namespace {
struct SchedPlace : pipesched::impl::SchedPlaceBase<SchedPlace> {
  void runOnOperation() override {
    StepOp step = getOperation();
    if (failed(requireJobs(step, "--sched-place", "--sched-expand")) ||
        failed(placeStep(step)))
      signalPassFailure();
  }
};
} // namespace
