//===- Bppsa.cpp - scan each microbatch's backward in parallel ------------===//
//
// A thin adapter: placed step -> scheduling::BppsaShape per microbatch ->
// buildBppsaScan (checked before, verified after) -> scan jobs in place of
// the microbatch's backwards.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDBPPSA
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

namespace {
struct SchedBppsa : pipesched::impl::SchedBppsaBase<SchedBppsa> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The scan's shape for one microbatch of `step`, before stage workers;
  /// fails (with a diagnostic) when its default time unit overflows.
  FailureOr<sch::BppsaShape> baseShape(StepOp step) const;
};

/// The jobs of one microbatch, by stage.
struct MicrobatchJobs {
  SmallVector<ForwardOp> forwards;
  SmallVector<Operation *> backwards; ///< backwards and weight halves
  SmallVector<JobOpInterface> placedAt; ///< per stage: its backward
};
} // namespace

FailureOr<sch::BppsaShape> SchedBppsa::baseShape(StepOp step) const {
  sch::BppsaShape shape;
  shape.stages = step.getStages();
  shape.microbatches = 1; // built per microbatch: placements differ
  shape.workers = step.getWorkers();
  shape.width = width;
  shape.rows = rows;
  shape.layers = layers;
  shape.form = form;
  shape.band = band;
  shape.placement = placement;
  shape.macsPerUnit = 1;
  if (macsPerUnit > 0) {
    shape.macsPerUnit = macsPerUnit;
    return shape;
  }
  if (!sch::checkBppsa(shape).empty())
    return shape; // the caller reports the shape's own problem
  // One unit: one sequential input-gradient step of a stage. Each option is
  // in range, but their product may not be.
  int64_t nnz = sch::productNonzeros([&] {
    sch::BppsaShape one = shape;
    one.layers = 1;
    return one;
  }(), 1);
  std::optional<int64_t> macs = llvm::checkedMul<int64_t>(rows, layers);
  for (int64_t factor : {int64_t(width), nnz})
    if (macs)
      macs = llvm::checkedMul(*macs, factor);
  if (!macs)
    return step.emitOpError()
           << "bppsa: the default time unit, one sequential input-gradient "
              "step of a stage (rows x layers x width x nonzeros per row = "
           << int64_t(rows) << " x " << int64_t(layers) << " x "
           << int64_t(width) << " x " << nnz
           << " multiply-adds), overflows 64 bits: give macs-per-unit";
  shape.macsPerUnit = std::max<int64_t>(1, *macs);
  return shape;
}

/// Whether `step`'s stages form the chain 0 -> 1 -> ... -> S-1.
static bool isChain(StepOp step) {
  StageGraphAttr graph = step.getStageGraphAttr();
  if (!graph)
    return true;
  int64_t S = step.getStages();
  if (int64_t(graph.getSources().size()) != S - 1)
    return false;
  for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
    if (dst != src + 1)
      return false;
  return true;
}

void SchedBppsa::runOnOperation() {
  StepOp step = getOperation();
  if (step.isSpec())
    return;
  Block &body = step.getBody().front();
  if (llvm::any_of(body, [](Operation &op) {
        return cast<JobOpInterface>(op).getDirection() == Direction::Scan;
      }))
    return; // already scanned
  if (!isChain(step)) {
    step.emitOpError("cannot scan the backward of a stage graph that is not "
                     "a chain (BPPSA composes one Jacobian per stage)");
    return signalPassFailure();
  }
  if (ResolvedPriority priority = resolvePriority(step); priority.order) {
    step.emitOpError()
        << "has the static order '" << stringifyPriorityPolicy(priority.policy)
        << "', which has no place for scan jobs: give it a priority key "
           "(for example `priority <backward_first>`)";
    return signalPassFailure();
  }

  int64_t S = step.getStages(), B = step.getMicrobatches();
  FailureOr<sch::BppsaShape> base = baseShape(step);
  if (failed(base))
    return signalPassFailure();
  sch::BppsaShape shape = *base;
  if (std::string error = sch::checkBppsa(shape); !error.empty()) {
    step.emitOpError() << error;
    return signalPassFailure();
  }

  // The jobs of every microbatch, in one pass over the block.
  SmallVector<MicrobatchJobs> jobs(static_cast<size_t>(B));
  for (MicrobatchJobs &m : jobs) {
    m.forwards.assign(static_cast<size_t>(S), ForwardOp());
    m.placedAt.assign(static_cast<size_t>(S), JobOpInterface());
  }
  for (Operation &op : body) {
    auto job = cast<JobOpInterface>(op);
    if (!job.getComputeWorker() || !job.getWeightsWorker()) {
      job->emitOpError() << describeJob(job)
                         << " is not placed: run --sched-place first";
      return signalPassFailure();
    }
    if (isa<ForwardOp>(op) && cast<ForwardOp>(op).getOverlapped()) {
      job->emitOpError() << describeJob(job)
                         << " is overlapped with a backward, which the scan "
                            "replaces";
      return signalPassFailure();
    }
    MicrobatchJobs &m = jobs[static_cast<size_t>(job.getMicrobatchIndex())];
    size_t s = static_cast<size_t>(job.getStageIndex());
    if (auto forward = dyn_cast<ForwardOp>(op)) {
      m.forwards[s] = forward;
      continue;
    }
    m.backwards.push_back(&op);
    if (job.getDirection() == Direction::Backward)
      m.placedAt[s] = job;
  }

  sch::BppsaMetrics metrics;
  OpBuilder builder(step.getContext());
  Location loc = step.getLoc();
  for (size_t b = 0; b < jobs.size(); ++b) {
    // Not a structured binding: lambdas below capture it (C++17).
    MicrobatchJobs &m = jobs[b];
    shape.stageWorker.assign(static_cast<size_t>(S), 0);
    for (int64_t s = 0; s < S; ++s) {
      if (!m.forwards[size_t(s)] || !m.placedAt[size_t(s)]) {
        step.emitOpError() << "is partial: microbatch " << b
                           << " lacks the forward or the backward of stage "
                           << s;
        return signalPassFailure();
      }
      shape.stageWorker[size_t(s)] = *m.placedAt[size_t(s)].getComputeWorker();
    }
    sch::BppsaGraph graph = sch::buildBppsaScan(shape);
    if (std::string error = sch::verifyBppsaScan(shape, graph); !error.empty()) {
      step.emitOpError() << "scan of microbatch " << b
                         << " is invalid: " << error;
      return signalPassFailure();
    }
    if (b == 0)
      metrics = sch::measureBppsa(shape, graph);

    // The scan takes the place of the microbatch's first backward.
    builder.setInsertionPoint(m.backwards.front());
    auto output = [&](int64_t s) { return m.forwards[size_t(s)].getOutput(); };
    auto owner = [&](int64_t s) {
      return *m.placedAt[size_t(s)].getWeightsWorker();
    };
    SmallVector<Value> value(graph.jobs.size());
    int64_t mb = static_cast<int64_t>(b);
    for (auto [i, job] : llvm::enumerate(graph.jobs)) {
      JobOpInterface created;
      switch (job.kind) {
      case sch::BppsaJobKind::LossGradient: {
        auto op = LossGradOp::create(builder, loc, job.stage, mb, output(S - 1));
        value[i] = op.getOutput();
        created = op;
        break;
      }
      case sch::BppsaJobKind::Jacobian: {
        auto op = JacobianOp::create(builder, loc, job.stage, mb,
                                     output(job.stage - 1));
        op.setWeights(owner(job.stage));
        value[i] = op.getOutput();
        created = op;
        break;
      }
      case sch::BppsaJobKind::UpSweep:
      case sch::BppsaJobKind::DownSweep: {
        auto op = CombineOp::create(
            builder, loc, S - job.hi, mb,
            job.product == sch::Product::JV ? Product::JV : Product::JJ,
            job.lo, job.hi, value[job.inputs[0]], value[job.inputs[1]]);
        value[i] = op.getOutput();
        created = op;
        break;
      }
      case sch::BppsaJobKind::WeightGradient: {
        SmallVector<Value, 1> acts;
        if (job.stage > 0)
          acts.push_back(output(job.stage - 1));
        auto op = BackwardWeightOp::create(builder, loc, job.stage, mb,
                                           value[job.inputs[0]], acts);
        op.setWeights(owner(job.stage));
        created = op;
        break;
      }
      }
      created.setComputeWorker(job.worker);
      Operation *o = created.getOperation();
      if (auto timed = dyn_cast<LossGradOp>(o))
        timed.setDuration(job.duration);
      else if (auto timed = dyn_cast<JacobianOp>(o))
        timed.setDuration(job.duration);
      else if (auto timed = dyn_cast<CombineOp>(o))
        timed.setDuration(job.duration);
      else
        cast<BackwardWeightOp>(o).setDuration(job.duration);
    }
    // Users first: a weight half reads its backward, a backward the next.
    for (Operation *op : llvm::reverse(m.backwards)) {
      op->dropAllUses();
      op->erase();
    }
  }

  Builder attrs(step.getContext());
  step->setAttr("sched.bppsa",
                attrs.getDictionaryAttr({
                    attrs.getNamedAttr("width", attrs.getI64IntegerAttr(width)),
                    attrs.getNamedAttr("steps", attrs.getI64IntegerAttr(metrics.steps)),
                    attrs.getNamedAttr("product_depth",
                                       attrs.getI64IntegerAttr(metrics.productDepth)),
                    attrs.getNamedAttr("critical_path",
                                       attrs.getI64IntegerAttr(metrics.criticalPath)),
                    attrs.getNamedAttr("sequential_path",
                                       attrs.getI64IntegerAttr(metrics.sequentialPath)),
                    attrs.getNamedAttr("work", attrs.getI64IntegerAttr(metrics.work)),
                    attrs.getNamedAttr("sequential_work",
                                       attrs.getI64IntegerAttr(metrics.sequentialWork)),
                }));
}
