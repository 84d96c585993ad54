//===- Passes.h - pipesched passes ------------------------------*- C++ -*-===//

#ifndef PIPESCHED_TRANSFORMS_PASSES_H
#define PIPESCHED_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Scheduling/Bppsa.h"
#include "pipesched/Scheduling/Partition.h"

namespace pipesched {

/// Output format of --sched-stats.
enum class StatsFormat { Table, Json };

/// The phases of the IR that --sched-verify-phase checks.
enum class Phase {
  Scheduled, ///< every step holds a placed, simulated job graph
  Lowered,   ///< no step is left: only sched.program
};

/// Proves the rank programs of `program` deadlock-free by abstract execution
/// (lib/Scheduling/DeadlockCheck), or reports the waiting ranks or the
/// mismatched operations; what --sched-verify-deadlock-free runs.
llvm::LogicalResult verifyDeadlockFree(sched::ProgramOp program);

#define GEN_PASS_DECL
#include "pipesched/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pipesched/Transforms/Passes.h.inc"

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_PASSES_H
