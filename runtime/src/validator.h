// Cross-rank checks of a loaded program, all in O(ops) time: every job runs
// exactly once; each rank computes or receives what it reads and holds the
// weights it computes with; sends and receives match per ordered pair of
// ranks; collectives agree across the members of their group. Throws
// ProgramError (loader.h) naming the op: "program.json: ranks[1].ops[7]: ...".
#pragma once

#include "program.h"

#include <cstdint>
#include <limits>

namespace pipesched::runtime {

struct ValidateOptions {
  int64_t maxTag = std::numeric_limits<int32_t>::max(); // MPI_TAG_UB
};

void validate(const Program &program, const ValidateOptions &options = {});

} // namespace pipesched::runtime
