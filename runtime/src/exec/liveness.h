// When a rank may free each tensor: after the last op of its program that
// reads or writes it (a tensor nobody reads is freed right after it is made).
// Computed once at load time in O(ops) from the ops' reads and writes, so
// memory stays bounded by what the schedule keeps live, not by the number
// of microbatches.
#pragma once

#include "program/program.h"

#include <cstdint>
#include <vector>

namespace pipesched::runtime {

struct FreePlan {
  // Tensor ids freed after top-level op i: ids[offsets[i] .. offsets[i+1]).
  std::vector<uint32_t> offsets;
  std::vector<int64_t> ids;
};

// Calls f(id) for every tensor the op reads or writes (a group: those of
// its children).
template <class F> void forEachTensor(const RankProgram &rp, const Op &op, F &&f) {
  const bool group = op.kind == OpKind::Group;
  const Op *ops = group ? rp.childrenOf(op) : &op;
  const uint32_t n = group ? op.count : 1;
  for (uint32_t c = 0; c < n; ++c) {
    for (int64_t id : rp.reads(ops[c]))
      f(id);
    for (int64_t id : rp.writes(ops[c]))
      f(id);
  }
}

FreePlan planFrees(const Program &program, int rank);

} // namespace pipesched::runtime
