// The tensors a compute op reads and writes, by operand role, for a stage
// graph: the rule is include/pipesched/Program/Roles.h, which the
// compiler's writer uses too. The loader checks every compute op against
// it, so the executor can rely on the lists.
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
