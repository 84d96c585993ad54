// When a rank may free each tensor: after the last op of its program that
// reads or writes it (a tensor nobody reads is freed right after it is made).
// Computed once at load time in O(ops), so memory stays bounded by what the
// schedule keeps live, not by the number of microbatches.
#pragma once

#include "program.h"

#include <cstdint>
#include <vector>

namespace pipesched::runtime {

struct FreePlan {
  // Keys freed after top-level op i: keys[offsets[i] .. offsets[i+1]).
  std::vector<uint32_t> offsets;
  std::vector<uint64_t> keys;
};

FreePlan planFrees(const Program &program, int rank);

} // namespace pipesched::runtime
