//===- Bppsa.cpp - scan each microbatch's backward in parallel ------------===//
//
// A thin adapter: placed step -> scheduling::BppsaShape per microbatch ->
// buildBppsaScan (checked before, verified after) -> scan jobs in place of
// the microbatch's backwards.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

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
  LogicalResult checkJobCount(StepOp step, const sch::BppsaGraph &graph,
                              size_t microbatches) const;
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
  if (macsPerUnit < 0)
    return step.emitOpError() << "bppsa: macs-per-unit must be >= 0 (0: one "
                                 "sequential input-gradient step), got "
                              << int64_t(macsPerUnit);
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

/// Whether the backward of placed `step` can be scanned; emits why not.
static LogicalResult checkScannable(StepOp step) {
  if (!isChain(step))
    return step.emitOpError("cannot scan the backward of a stage graph that "
                            "is not a chain (BPPSA composes one Jacobian per "
                            "stage)");
  if (ResolvedPriority priority = resolvePriority(step); priority.order)
    return step.emitOpError()
           << "has the static order '" << stringifyPriorityPolicy(priority.policy)
           << "', which has no place for scan jobs: give it a priority key "
              "(for example `priority <backward_first>`)";
  return success();
}

/// The jobs of every microbatch, in one pass over the block; fails on a job
/// that is not placed or a forward overlapped with a backward.
static FailureOr<SmallVector<MicrobatchJobs>> collectJobs(StepOp step) {
  int64_t S = step.getStages(), B = step.getMicrobatches();
  SmallVector<MicrobatchJobs> jobs(static_cast<size_t>(B));
  for (MicrobatchJobs &m : jobs) {
    m.forwards.assign(static_cast<size_t>(S), ForwardOp());
    m.placedAt.assign(static_cast<size_t>(S), JobOpInterface());
  }
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    if (!job.getComputeWorker() || !job.getWeightsWorker())
      return job->emitOpError() << describeJob(job)
                                << " is not placed: run --sched-place first";
    if (isa<ForwardOp>(op) && cast<ForwardOp>(op).getOverlapped())
      return job->emitOpError() << describeJob(job)
                                << " is overlapped with a backward, which the "
                                   "scan replaces";
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
  return jobs;
}

/// Sets `job`'s duration, an attribute of each scan op's own class.
static void setDuration(Operation *o, int64_t duration) {
  if (auto timed = dyn_cast<LossGradOp>(o))
    timed.setDuration(duration);
  else if (auto timed = dyn_cast<JacobianOp>(o))
    timed.setDuration(duration);
  else if (auto timed = dyn_cast<CombineOp>(o))
    timed.setDuration(duration);
  else
    cast<BackwardWeightOp>(o).setDuration(duration);
}

/// Creates the scan jobs of `graph` for microbatch `mb` at the builder's
/// insertion point, reading the forwards' outputs of `m`.
static void createScanJobs(OpBuilder &builder, Location loc,
                           const sch::BppsaGraph &graph, MicrobatchJobs &m,
                           int64_t S, int64_t mb) {
  auto output = [&](int64_t s) { return m.forwards[size_t(s)].getOutput(); };
  auto owner = [&](int64_t s) {
    return *m.placedAt[size_t(s)].getWeightsWorker();
  };
  SmallVector<Value> value(graph.jobs.size());
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
    setDuration(created.getOperation(), job.duration);
  }
}

/// Records the scan's figures on `step` (`sched.bppsa`).
static void recordMetrics(StepOp step, int64_t width,
                          const sch::BppsaMetrics &metrics) {
  Builder attrs(step.getContext());
  auto i64 = [&](StringRef name, int64_t v) {
    return attrs.getNamedAttr(name, attrs.getI64IntegerAttr(v));
  };
  step->setAttr("sched.bppsa",
                attrs.getDictionaryAttr({
                    i64("width", width),
                    i64("steps", metrics.steps),
                    i64("product_depth", metrics.productDepth),
                    i64("critical_path", metrics.criticalPath),
                    i64("sequential_path", metrics.sequentialPath),
                    i64("work", metrics.work),
                    i64("sequential_work", metrics.sequentialWork),
                }));
}

/// Microbatches scan alike: the first one's scan sizes the whole step,
/// checked before any op is created (a 200-byte spec within
/// --sched-expand's max-jobs can otherwise scan into gigabytes).
LogicalResult SchedBppsa::checkJobCount(StepOp step,
                                        const sch::BppsaGraph &graph,
                                        size_t microbatches) const {
  // Both factors are below 2^31 (checked shapes), the product fits.
  int64_t perMicrobatch = step.getStages() + int64_t(graph.jobs.size());
  int64_t total = perMicrobatch * int64_t(microbatches);
  if (total <= maxJobs)
    return success();
  return step.emitOpError()
         << "bppsa: the scanned step would hold " << total << " jobs ("
         << perMicrobatch << " per microbatch), more than max-jobs = "
         << int64_t(maxJobs) << " (--sched-bppsa=max-jobs=N raises the limit)";
}

void SchedBppsa::runOnOperation() {
  StepOp step = getOperation();
  if (failed(requireJobs(step, "--sched-bppsa",
                         "--sched-expand and --sched-place")))
    return signalPassFailure();
  if (llvm::any_of(step.getBody().front(), [](Operation &op) {
        return cast<JobOpInterface>(op).getDirection() == Direction::Scan;
      }))
    return; // already scanned
  if (failed(checkScannable(step)))
    return signalPassFailure();
  FailureOr<sch::BppsaShape> base = baseShape(step);
  if (failed(base))
    return signalPassFailure();
  sch::BppsaShape shape = *base;
  if (std::string error = sch::checkBppsa(shape); !error.empty()) {
    step.emitOpError() << error;
    return signalPassFailure();
  }
  FailureOr<SmallVector<MicrobatchJobs>> jobs = collectJobs(step);
  if (failed(jobs))
    return signalPassFailure();

  int64_t S = step.getStages();
  sch::BppsaMetrics metrics;
  OpBuilder builder(step.getContext());
  for (auto [b, m] : llvm::enumerate(*jobs)) {
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
    if (b == 0) {
      if (failed(checkJobCount(step, graph, jobs->size())))
        return signalPassFailure();
      metrics = sch::measureBppsa(shape, graph);
    }
    // The scan takes the place of the microbatch's first backward.
    builder.setInsertionPoint(m.backwards.front());
    createScanJobs(builder, step.getLoc(), graph, m, S, static_cast<int64_t>(b));
    // Users first: a weight half reads its backward, a backward the next.
    for (Operation *op : llvm::reverse(m.backwards)) {
      op->dropAllUses();
      op->erase();
    }
  }
  recordMetrics(step, width, metrics);
}
