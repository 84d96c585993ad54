#include "cuda/device_choice.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace pipesched::runtime::cuda {

std::string formatUuid(const DeviceUuid &u) {
  std::string s = "GPU-";
  char hex[3];
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      s += '-';
    std::snprintf(hex, sizeof hex, "%02x", unsigned(u[i]));
    s += hex;
  }
  return s;
}

std::vector<DeviceChoice> chooseDevices(const std::vector<NodeRank> &node,
                                        bool allowSharing) {
  std::vector<DeviceChoice> choices(node.size());
  for (size_t i = 0; i < node.size(); ++i) {
    const NodeRank &n = node[i];
    if (!n.visible.empty())
      choices[i].device = int(size_t(n.localRank) % n.visible.size());
  }
  if (allowSharing)
    return choices;

  // Ranks in increasing order: the lowest rank keeps a device, the others
  // that chose it are refused naming it.
  std::vector<size_t> order(node.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return node[a].rank < node[b].rank; });
  std::map<DeviceUuid, int> owner; // device -> the lowest rank that took it
  for (size_t i : order) {
    if (choices[i].device < 0)
      continue;
    const DeviceUuid &uuid = node[i].visible[size_t(choices[i].device)];
    auto [it, fresh] = owner.emplace(uuid, node[i].rank);
    if (fresh)
      continue;
    choices[i].error =
        "ranks " + std::to_string(it->second) + " and " + std::to_string(node[i].rank) +
        " would share CUDA device " + formatUuid(uuid) +
        " (NCCL runs no two ranks of a communicator on one GPU): give each rank "
        "its own GPU (CUDA_VISIBLE_DEVICES, Slurm --gpus-per-task=1), or let "
        "ranks share GPUs with --gpu-comm mpi (docs/runtime.md, Backends)";
  }
  return choices;
}

} // namespace pipesched::runtime::cuda
