//===- Place.cpp - evaluate the placement maps on every job ---------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDPLACE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedPlace : pipesched::impl::SchedPlaceBase<SchedPlace> {
  void runOnOperation() override {
    StepOp step = getOperation();
    if (step.isSpec())
      return;
    // A graph placed entirely by hand (an imported schedule) needs no scheme.
    bool needsScheme = llvm::any_of(step.getBody().front(), [](Operation &op) {
      auto job = dyn_cast<JobOpInterface>(op);
      return job && (!job.getComputeWorker() || !job.getWeightsWorker());
    });
    if (!needsScheme)
      return;
    FailureOr<Scheme> scheme = resolveScheme(step);
    if (failed(scheme))
      return signalPassFailure();

    int64_t numWorkers = step.getWorkers();
    // Returns the worker `map` gives `job`, or a diagnostic naming the job.
    auto evaluate = [&](JobOpInterface job, AffineMap map,
                        StringRef role) -> FailureOr<int64_t> {
      int64_t worker = evaluatePlacement(map, job.getStageIndex(),
                                         job.getMicrobatchIndex(),
                                         job.getDirection());
      if (worker >= 0 && worker < numWorkers)
        return worker;
      return job->emitOpError()
             << role << " maps " << describeJob(job) << " to worker " << worker
             << ", outside [0, " << numWorkers << ")";
    };

    for (Operation &op : step.getBody().front()) {
      auto job = dyn_cast<JobOpInterface>(op);
      if (!job)
        continue;
      // A placement written by hand wins.
      if (!job.getComputeWorker()) {
        FailureOr<int64_t> worker =
            evaluate(job, scheme->compute, "w_compute");
        if (failed(worker))
          return signalPassFailure();
        job.setComputeWorker(*worker);
      }
      if (!job.getWeightsWorker()) {
        FailureOr<int64_t> worker =
            evaluate(job, scheme->weights, "w_weights");
        if (failed(worker))
          return signalPassFailure();
        job.setWeightsWorker(*worker);
      }
    }
  }
};
} // namespace
