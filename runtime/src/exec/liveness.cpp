#include "exec/liveness.h"

#include <unordered_map>

namespace pipesched::runtime {

FreePlan planFrees(const Program &program, int rank) {
  const RankProgram &rp = program.ranks[size_t(rank)];
  std::unordered_map<int64_t, uint32_t> lastUse;
  for (uint32_t i = 0; i < rp.ops.size(); ++i)
    forEachTensor(rp, rp.ops[i], [&](int64_t id) { lastUse[id] = i; });
  // Counting sort by op index: offsets, then ids in place.
  FreePlan plan;
  plan.offsets.assign(rp.ops.size() + 1, 0);
  for (const auto &entry : lastUse)
    ++plan.offsets[entry.second + 1];
  for (size_t i = 1; i < plan.offsets.size(); ++i)
    plan.offsets[i] += plan.offsets[i - 1];
  plan.ids.resize(lastUse.size());
  std::vector<uint32_t> fill(plan.offsets.begin(), plan.offsets.end() - 1);
  for (const auto &entry : lastUse)
    plan.ids[fill[entry.second]++] = entry.first;
  return plan;
}

} // namespace pipesched::runtime
