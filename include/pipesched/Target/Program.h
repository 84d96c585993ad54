//===- Program.h - the per-rank program format ------------------*- C++ -*-===//
//
// Emission of lowered steps in the documented, versioned JSON format that
// the runtime reads without MLIR (docs/program-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TARGET_PROGRAM_H
#define PIPESCHED_TARGET_PROGRAM_H

#include "pipesched/Target/ProgramEncoder.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

namespace pipesched {
namespace sched {
class StepOp;
} // namespace sched
struct PlannedStep;

/// Writes the rank programs of the single `sched.program` under `op` as
/// a program document (pipesched/Program/Schema.h): the program is read
/// back into its plan and written by the writer of compileProgram. Fails,
/// naming the pipeline to run, when `op` holds an unlowered `sched.step`
/// instead, and where the rank programs do not form a plan (a message
/// without both ends, ends or reductions that disagree). It serializes and
/// does not prove: --sched-verify-deadlock-free does.
llvm::LogicalResult exportProgram(mlir::Operation *op, llvm::raw_ostream &os);
/// The same into any layout and encoding (ProgramEncoder.h).
llvm::LogicalResult exportProgram(mlir::Operation *op, ProgramEncoder &out);
/// Lowers the single simulated `sched.step` under `op` (after
/// pipeline-schedule) and writes its programs without building rank IR:
/// planStep (as --sched-lower-ranks plans; `verify` verifies the plan and
/// proves it deadlock-free), then the plan straight into `out`. The bytes
/// are those of --sched-lower-ranks followed by exportProgram. A
/// `sched.program` already lowered is written by exportProgram.
/// `timing`, when given, times planning and writing as nested scopes.
llvm::LogicalResult compileProgram(mlir::Operation *op, int64_t prefetchDepth,
                                   bool verify, ProgramEncoder &out,
                                   mlir::TimingScope *timing = nullptr);

/// Writes the programs of a planned step (planStep) into `out`.
llvm::LogicalResult emitPlannedStep(sched::StepOp step,
                                    const PlannedStep &planned,
                                    ProgramEncoder &out);
/// Registers `--sched-to-program` with mlir-translate's registry.
void registerExportProgram();

} // namespace pipesched

#endif // PIPESCHED_TARGET_PROGRAM_H
