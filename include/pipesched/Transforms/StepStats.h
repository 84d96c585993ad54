//===- StepStats.h - the figures of a simulated step ------------*- C++ -*-===//
//
// What --sched-stats=json reports for one step (docs/stats.md), as a
// library call: the report tool and embedders read the same figures the
// pass prints.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_STEPSTATS_H
#define PIPESCHED_TRANSFORMS_STEPSTATS_H

#include "pipesched/Dialect/Sched/SchedOps.h"

#include "llvm/Support/JSON.h"

namespace pipesched {

/// The JSON object of one simulated (placed, ordered, timed) step, as in
/// `--sched-stats=json`'s `steps` list; emits a located error otherwise.
llvm::FailureOr<llvm::json::Object> collectStepStats(sched::StepOp step);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_STEPSTATS_H
