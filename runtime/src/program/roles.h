// The tensors a compute op reads and writes, by operand role, as the schema
// fixes them for a stage graph (include/pipesched/Program/Schema.h):
//  - forward (s, b): reads act(p, b) for s's predecessors p in edge order
//    (none: the microbatch's data); writes act(s, b);
//  - backward (s, b): reads grad(t, b) for s's successors t in edge order
//    (at a sink: its own output act(s, b)), then what its forward read;
//    writes grad(s, b) iff s has predecessors;
//  - backward_weight (s, b): reads what its backward reads; writes nothing;
//    in a scanned backward (BPPSA), a scan tensor (its output's gradient),
//    then what its forward read;
//  - loss_grad (s, b): reads act(s, b); jacobian (s, b): what its forward
//    read; combine: two scan tensors; each writes one scan tensor.
// The loader checks every compute op against these lists, so the executor
// can rely on them.
#pragma once

#include "program/program.h"

#include <string>
#include <vector>

namespace pipesched::runtime {

// How many of a backward's reads make its output gradient: one per
// successor, or the stage's own output at a sink. The rest are its input.
inline uint32_t gradientReads(const StageGraph &graph, int stage) {
  return graph.isSink(stage) ? 1u : uint32_t(graph.successors(stage).size());
}

// Whether the op's reads / writes are exactly its roles. No allocation.
bool readsMatchRoles(const Program &p, const Op &op, IdList reads);
bool writesMatchRoles(const Program &p, const Op &op, IdList writes);

// For messages: the expected ids and what they are, e.g. "[0, 2] (the
// outputs of stages 0, 1 on microbatch 0)".
std::string expectedReads(const Program &p, const Op &op);
std::string expectedWrites(const Program &p, const Op &op);

} // namespace pipesched::runtime
