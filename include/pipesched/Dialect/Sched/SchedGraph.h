//===- SchedGraph.h - building the job graph of a step ----------*- C++ -*-===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDGRAPH_H
#define PIPESCHED_DIALECT_SCHED_SCHEDGRAPH_H

#include "pipesched/Dialect/Sched/SchedOps.h"

namespace pipesched::sched {

/// Appends every job of `step` (which must be a spec) with its SSA edges:
/// microbatch by microbatch, each forward chain then its backward chain
/// (each backward followed by its weight-gradient job when the backward is
/// split). Linear in the number of jobs; attributes are interned once.
void buildJobGraph(StepOp step);

} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_SCHEDGRAPH_H
