// Which GPU each rank of a node takes (src/cuda/device_choice.h): the
// launches that must run, and the device sharing that NCCL refuses.
#include "cuda/device_choice.h"

#include <gtest/gtest.h>

#include <set>

namespace {

using namespace pipesched::runtime::cuda;

DeviceUuid uuid(unsigned char id) {
  DeviceUuid u{};
  for (size_t i = 0; i < u.size(); ++i)
    u[i] = static_cast<unsigned char>(id * 16 + i);
  return u;
}

std::vector<DeviceUuid> gpus(unsigned char first, unsigned char count) {
  std::vector<DeviceUuid> all;
  for (unsigned char i = 0; i < count; ++i)
    all.push_back(uuid(first + i));
  return all;
}

// The UUID each rank ends up on.
std::set<DeviceUuid> chosen(const std::vector<NodeRank> &node,
                            const std::vector<DeviceChoice> &choices) {
  std::set<DeviceUuid> uuids;
  for (size_t i = 0; i < node.size(); ++i)
    uuids.insert(node[i].visible.at(size_t(choices[i].device)));
  return uuids;
}

TEST(DeviceChoice, FormatsUuidsAsNvidiaSmi) {
  EXPECT_EQ(formatUuid(uuid(0)), "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(formatUuid(uuid(15)), "GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
}

// CUDA_VISIBLE_DEVICES per rank, Slurm --gpus-per-task=1: each rank sees
// one GPU, its own, as device 0 (this launch used to be refused).
TEST(DeviceChoice, OneVisibleGpuPerRank) {
  std::vector<NodeRank> node;
  for (int r = 0; r < 4; ++r)
    node.push_back({r, r, {uuid(static_cast<unsigned char>(r))}});
  std::vector<DeviceChoice> choices = chooseDevices(node, false);
  ASSERT_EQ(choices.size(), 4u);
  for (const DeviceChoice &c : choices) {
    EXPECT_EQ(c.device, 0);
    EXPECT_EQ(c.error, "");
  }
  EXPECT_EQ(chosen(node, choices).size(), 4u);
}

TEST(DeviceChoice, EveryGpuVisibleToEveryRank) {
  std::vector<NodeRank> node;
  for (int r = 0; r < 4; ++r)
    node.push_back({r, r, gpus(0, 8)});
  std::vector<DeviceChoice> choices = chooseDevices(node, false);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(choices[size_t(r)].device, r);
    EXPECT_EQ(choices[size_t(r)].error, "");
  }
}

TEST(DeviceChoice, RanksSharingOneGpuAreRefusedByName) {
  std::vector<NodeRank> node;
  for (int r = 0; r < 4; ++r)
    node.push_back({r, r, {uuid(7)}});
  std::vector<DeviceChoice> choices = chooseDevices(node, false);
  EXPECT_EQ(choices[0].error, ""); // the lowest rank keeps it
  const std::string shared = " would share CUDA device " + formatUuid(uuid(7)) +
                             " (NCCL runs no two ranks of a communicator on one GPU)";
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(choices[size_t(r)].device, 0);
    EXPECT_EQ(choices[size_t(r)].error.rfind("ranks 0 and " + std::to_string(r) + shared, 0),
              0u)
        << choices[size_t(r)].error;
    EXPECT_NE(choices[size_t(r)].error.find("--gpu-comm mpi"), std::string::npos);
  }
}

// Four ranks, two GPUs visible to each: 0 and 2 meet on the first, 1 and 3
// on the second. World ranks need not be node ranks, nor come in order.
TEST(DeviceChoice, MoreRanksThanGpus) {
  std::vector<NodeRank> node = {
      {13, 3, gpus(0, 2)}, {10, 0, gpus(0, 2)}, {11, 1, gpus(0, 2)}, {12, 2, gpus(0, 2)}};
  std::vector<DeviceChoice> choices = chooseDevices(node, false);
  EXPECT_EQ(choices[1].error, "");
  EXPECT_EQ(choices[2].error, "");
  EXPECT_EQ(choices[3].error.rfind("ranks 10 and 12 would share CUDA device " +
                                       formatUuid(uuid(0)),
                                   0),
            0u)
      << choices[3].error;
  EXPECT_EQ(choices[0].error.rfind("ranks 11 and 13 would share CUDA device " +
                                       formatUuid(uuid(1)),
                                   0),
            0u)
      << choices[0].error;
}

// --gpu-comm mpi: ranks may share a device.
TEST(DeviceChoice, SharingAllowed) {
  std::vector<NodeRank> node;
  for (int r = 0; r < 8; ++r)
    node.push_back({r, r, {uuid(3)}});
  for (const DeviceChoice &c : chooseDevices(node, true)) {
    EXPECT_EQ(c.device, 0);
    EXPECT_EQ(c.error, "");
  }
}

// A rank that sees no device reports CUDA's reason itself; the others go on.
TEST(DeviceChoice, RankWithoutDevices) {
  std::vector<NodeRank> node = {{0, 0, {}}, {1, 1, {uuid(1)}}};
  std::vector<DeviceChoice> choices = chooseDevices(node, false);
  EXPECT_EQ(choices[0].device, -1);
  EXPECT_EQ(choices[0].error, "");
  EXPECT_EQ(choices[1].device, 0);
  EXPECT_EQ(choices[1].error, "");
}

} // namespace
