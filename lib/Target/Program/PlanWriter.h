//===- PlanWriter.h - the one writer of program files -----------*- C++ -*-===//
//
// Every program file is written from a communication plan: a step's plan
// (planStep, EmitPlan.cpp) or the plan a lowered `sched.program` is read
// back into (LoadPlan.cpp). One writer, so the two command paths cannot
// write different bytes for the same programs.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_LIB_TARGET_PROGRAM_PLANWRITER_H
#define PIPESCHED_LIB_TARGET_PROGRAM_PLANWRITER_H

#include "ProgramNaming.h"

#include "pipesched/Scheduling/CommPlan.h"

namespace pipesched {

/// A plan as the writer reads it.
struct PlanToWrite {
  /// The program's header; its scan tensor count is the writer's to set.
  ProgramHeader header;
  const TensorNaming &naming;
  const scheduling::CommProblem &problem;
  /// The op of each job (its kind, product and times), like problem.jobs.
  llvm::ArrayRef<sched::JobOpInterface> jobs;
  const scheduling::CommPlan &plan;
};

/// Writes `toWrite` into `out`; a write error is reported on `where`.
llvm::LogicalResult writePlan(const PlanToWrite &toWrite, ProgramEncoder &out,
                              mlir::Operation *where);

/// A lowered `sched.program` read back into the plan it was built from
/// (the mirror of --sched-lower-ranks): jobs in rank order, each message
/// with both of its ends, each reduction with every rank's op of it.
struct LoadedPlan {
  scheduling::CommProblem problem;
  llvm::SmallVector<sched::JobOpInterface> jobs;
  scheduling::CommPlan plan;
};

/// Reads `program` into a plan; a located error where the rank programs do
/// not form one: a message without both ends or whose ends disagree, a
/// value that is nobody's output, ranks that disagree on a reduction.
llvm::FailureOr<LoadedPlan> loadPlan(sched::ProgramOp program);

} // namespace pipesched

#endif // PIPESCHED_LIB_TARGET_PROGRAM_PLANWRITER_H
