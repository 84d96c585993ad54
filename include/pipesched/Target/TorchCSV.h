//===- TorchCSV.h - torch.distributed.pipelining CSV schedules --*- C++ -*-===//
//
// The per-rank compute order of torch.distributed.pipelining as CSV: one row
// per rank, one action per cell (`<stage><F|B|I|W><microbatch>`, e.g. `0F3`,
// `1B2`, `2I0`, `2W0`), an empty cell an idle step. See docs/torch-csv.md.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TARGET_TORCHCSV_H
#define PIPESCHED_TARGET_TORCHCSV_H

#include "pipesched/Dialect/Sched/SchedOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace pipesched {

/// Reads a CSV schedule into a module holding one placed, ordered
/// `sched.step`. Emits located diagnostics (file:line:column of the cell)
/// and returns null on malformed input.
mlir::OwningOpRef<mlir::ModuleOp> importTorchCSV(llvm::SourceMgr &sourceMgr,
                                                 mlir::MLIRContext *ctx);

/// Writes the single `sched.step` under `op` (placed and ordered) as CSV:
/// one row per worker, its jobs in order; when the step was simulated, an
/// empty cell before each job the worker had to wait for.
llvm::LogicalResult exportTorchCSV(mlir::Operation *op, llvm::raw_ostream &os);

/// torch's `compute_comms` form: the compute order with torch's own send
/// and receive actions (`_merge_bw` and `_add_send_recv`).
llvm::LogicalResult exportTorchCommsCSV(mlir::Operation *op,
                                        llvm::raw_ostream &os);

/// torch's action letter of a job: F forward, B whole backward (a backward
/// of an unsplit step, or one marked `whole`), I input-gradient half, W
/// weight-gradient half. A scan job (BPPSA) has none: 0.
char torchActionLetter(sched::JobOpInterface job, bool splitBackward);

/// Registers `--import-torch-csv` with mlir-translate's registry.
void registerImportTorchCSV();

/// Registers `--sched-to-torch-csv` with mlir-translate's registry.
void registerExportTorchCSV();

} // namespace pipesched

#endif // PIPESCHED_TARGET_TORCHCSV_H
