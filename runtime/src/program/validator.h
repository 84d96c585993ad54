// Cross-rank checks of a loaded program, all in O(ops) time: every job runs
// exactly once; each rank computes or receives what it reads and holds the
// weights it computes with; every owner applies its optimizer exactly once,
// after all the gradient it should apply; tags are unique; and, by abstract
// execution under NCCL's matching rule (matching.h), sends and receives
// match, collectives agree, and no ranks wait on each other in a cycle.
// Throws ProgramError (program_error.h) naming the op:
// "program.json: ranks[1].ops[7]: ...".
#pragma once

#include "program/program.h"

#include <cstdint>
#include <limits>

namespace pipesched::runtime {

struct ValidateOptions {
  int64_t maxTag = std::numeric_limits<int32_t>::max(); // MPI_TAG_UB
};

void validate(const Program &program, const ValidateOptions &options = {});

// What validate() checks of one rank that needs no other rank's ops: what
// it reads is computed or received before, the weights it computes with
// are owned or fetched, its gradients reach its optimizer steps, its tied
// reductions, its tags (below the bound, distinct among its sends). A run
// of a per-rank program (Program::onlyRank) checks its own rank with it;
// the rest (jobs once, matching, deadlock freedom) needs every rank's ops.
void validateRank(const Program &program, int rank, const ValidateOptions &options = {});

} // namespace pipesched::runtime
