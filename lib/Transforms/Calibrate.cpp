//===- Calibrate.cpp - give a step the costs measured on a machine --------===//
//
// Reads a cost file (include/pipesched/Program/Costs.h) into the
// dialect-free scheduling::MeasuredCosts, checks it, calibrates and writes
// the result back as the step's `#sched.cost` in nanoseconds.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/Calibration.h"
#include "pipesched/Transforms/CostFile.h"
#include "pipesched/Transforms/Passes.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDCALIBRATE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedCalibrate : pipesched::impl::SchedCalibrateBase<SchedCalibrate> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SchedCalibrate::runOnOperation() {
  StepOp step = getOperation();
  auto refuse = [&](const llvm::Twine &why) {
    step.emitOpError() << "cannot calibrate with '" << costs << "': " << why;
    signalPassFailure();
  };
  if (costs.empty())
    return refuse("no cost file (--sched-calibrate=costs=FILE)");
  if (step->hasAttr("sched.bppsa"))
    return refuse("the step scans its backward (BPPSA), whose jobs carry "
                  "their own durations");

  scheduling::MeasuredCosts measured;
  if (std::string error = readCostFile(costs, measured); !error.empty())
    return refuse(error);
  if (int64_t(measured.fwd.size()) != step.getStages())
    return refuse("it was measured on " + llvm::Twine(measured.fwd.size()) +
                  " stages, the step has " + llvm::Twine(step.getStages()));

  CostAttr old = step.getCostOrDefault();
  bool split = old.isSplitBackward();
  if (split && measured.bwdWeight.empty())
    return refuse("the step splits its backward (bwd_w) but the file "
                  "measured whole backwards: profile a split program");

  constexpr int64_t kTickNs = 1;
  scheduling::CalibratedCosts calibrated =
      scheduling::calibrate(measured, kTickNs, split);
  if (std::string problem = calibrated.verify(measured, split);
      !problem.empty())
    return refuse(problem);
  step.setCostAttr(CostAttr::get(
      step.getContext(), calibrated.fwd, calibrated.bwd, calibrated.bwdWeight,
      calibrated.actBytes, calibrated.weightBytes, /*fwdBwd=*/{},
      calibrated.transfer, kTickNs, calibrated.latency, calibrated.bandwidth,
      calibrated.optimizer, calibrated.reduce, /*actWBytes=*/-1));
}
