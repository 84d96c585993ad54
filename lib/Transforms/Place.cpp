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
    FailureOr<Scheme> scheme = resolveScheme(step);
    if (failed(scheme))
      return signalPassFailure();

    int64_t numWorkers = step.getWorkers();
    // One uniqued attribute per worker, interned once.
    Builder builder(&getContext());
    SmallVector<IntegerAttr> workerAttr;
    for (int64_t w = 0; w < numWorkers; ++w)
      workerAttr.push_back(builder.getI64IntegerAttr(w));

    auto place = [&](JobOpInterface job, AffineMap map, StringRef role,
                     StringRef attrName) -> LogicalResult {
      Operation *op = job.getOperation();
      if (op->hasAttr(attrName))
        return success();
      int64_t worker = evaluatePlacement(map, job.getStageIndex(),
                                         job.getMicrobatchIndex(),
                                         job.getDirection());
      if (worker < 0 || worker >= numWorkers)
        return op->emitOpError()
               << role << " maps " << describeJob(job) << " to worker "
               << worker << ", outside [0, " << numWorkers << ")";
      op->setAttr(attrName, workerAttr[worker]);
      return success();
    };

    for (Operation &op : step.getBody().front()) {
      auto job = dyn_cast<JobOpInterface>(op);
      if (!job)
        continue;
      if (failed(place(job, scheme->compute, "w_compute", "compute")) ||
          failed(place(job, scheme->weights, "w_weights", "weights")))
        return signalPassFailure();
    }
  }
};
} // namespace
