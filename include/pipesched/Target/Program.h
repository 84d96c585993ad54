//===- Program.h - the per-rank program format ------------------*- C++ -*-===//
//
// Emission of lowered steps in the documented, versioned JSON format that
// the runtime reads without MLIR (docs/program-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TARGET_PROGRAM_H
#define PIPESCHED_TARGET_PROGRAM_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

namespace pipesched {

/// Writes the rank programs of the single `sched.program` under `op` as
/// a program document (pipesched/Program/Schema.h). Fails, naming the
/// pipeline to run, when `op` holds an unlowered `sched.step` instead.
/// With `verify`, the programs are first proven deadlock-free
/// (verifyDeadlockFree); callers that just ran --pipeline-lower with its
/// verification may skip it.
llvm::LogicalResult exportProgram(mlir::Operation *op, llvm::raw_ostream &os,
                                  bool verify = true);

/// Registers `--sched-to-program` with mlir-translate's registry.
void registerExportProgram();

} // namespace pipesched

#endif // PIPESCHED_TARGET_PROGRAM_H
