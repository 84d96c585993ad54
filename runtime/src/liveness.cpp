#include "liveness.h"

#include <unordered_map>

namespace pipesched::runtime {

FreePlan planFrees(const Program &program, int rank) {
  const RankProgram &rp = program.ranks[rank];
  std::unordered_map<uint64_t, uint32_t> lastUse;
  for (uint32_t i = 0; i < rp.ops.size(); ++i) {
    auto use = [&](uint64_t key) { lastUse[key] = i; };
    forEachRead(program, rp, rp.ops[i], use);
    forEachWrite(program, rp, rp.ops[i], use);
  }
  // Counting sort by op index: offsets, then keys in place.
  FreePlan plan;
  plan.offsets.assign(rp.ops.size() + 1, 0);
  for (const auto &entry : lastUse)
    ++plan.offsets[entry.second + 1];
  for (size_t i = 1; i < plan.offsets.size(); ++i)
    plan.offsets[i] += plan.offsets[i - 1];
  plan.keys.resize(lastUse.size());
  std::vector<uint32_t> fill(plan.offsets.begin(), plan.offsets.end() - 1);
  for (const auto &entry : lastUse)
    plan.keys[fill[entry.second]++] = entry.first;
  return plan;
}

} // namespace pipesched::runtime
