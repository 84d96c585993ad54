// Which GPU each rank of a node takes (--backend cuda), decided over plain
// data so that it is unit-tested on the CPU (cuda_device.cpp gathers the
// data over MPI and applies it).
//
// Each rank takes, among the devices it sees, the one at its node-local
// rank modulo their number: with one visible GPU per rank
// (CUDA_VISIBLE_DEVICES per rank, Slurm --gpus-per-task=1) that is the
// rank's own; with every GPU visible to every rank, GPU i for local rank i.
// Devices are compared by UUID, not index, since indices are relative to
// what each rank sees. Two ranks on one device are refused unless sharing
// is allowed (--gpu-comm mpi): NCCL does not run two ranks of a
// communicator on one GPU.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace pipesched::runtime::cuda {

using DeviceUuid = std::array<unsigned char, 16>;

// As nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string formatUuid(const DeviceUuid &uuid);

// One rank of the node: its world rank, node-local rank and the UUIDs of
// the devices it sees, in CUDA's order.
struct NodeRank {
  int rank;
  int localRank;
  std::vector<DeviceUuid> visible;
};

struct DeviceChoice {
  int device = -1; // index among the rank's visible devices; -1: it sees none
  std::string error; // "" or why the rank may not run
};

// One choice per entry of `node`, in its order. A rank that sees no device
// gets -1 and no error (it reports its own, with CUDA's reason). Unless
// `allowSharing`, a rank whose device a lower rank already took gets an
// error naming both ranks and the device's UUID.
std::vector<DeviceChoice> chooseDevices(const std::vector<NodeRank> &node,
                                        bool allowSharing);

} // namespace pipesched::runtime::cuda
