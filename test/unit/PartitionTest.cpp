// Stage partitioning (lib/Scheduling/Partition.cpp): the dynamic program
// against every partition of small random chains (bottleneck, feasibility
// under a memory limit, the least memory), the memory model, the tie
// rule, uniform stages, and every refusal of check().
#include "pipesched/Scheduling/Partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace pipesched::scheduling;

namespace {

Layer layer(const std::string &name, int64_t fwd, int64_t bwd, int64_t act = 0,
            int64_t weights = 0) {
  Layer l;
  l.name = name;
  l.fwd = fwd;
  l.bwd = bwd;
  l.actBytes = act;
  l.weightBytes = weights;
  return l;
}

PartitionProblem problem(std::vector<Layer> layers, int64_t stages) {
  PartitionProblem p;
  p.layers = std::move(layers);
  p.stages = stages;
  return p;
}

/// Calls `visit(starts)` for every partition of L layers into S non-empty
/// consecutive stages.
template <typename Visit>
void everyPartition(int64_t L, int64_t S, Visit visit) {
  std::vector<int64_t> starts{0};
  auto recurse = [&](auto &self) -> void {
    int64_t k = int64_t(starts.size());
    if (k == S) {
      visit(starts);
      return;
    }
    // Stage k starts after stage k - 1's first layer, leaving a layer for
    // each of the S - k - 1 stages after it.
    for (int64_t at = starts.back() + 1; at <= L - (S - k); ++at) {
      starts.push_back(at);
      self(self);
      starts.pop_back();
    }
  };
  recurse(recurse);
}

struct Brute {
  std::optional<int64_t> bottleneck; ///< none: nothing fits
  int64_t leastMemory = std::numeric_limits<int64_t>::max();
  int64_t partitions = 0;
};

Brute bruteForce(const PartitionProblem &p) {
  Brute b;
  everyPartition(int64_t(p.layers.size()), p.stages, [&](const std::vector<int64_t> &starts) {
    ++b.partitions;
    Partition part = evaluatePartition(p, starts);
    int64_t memory = *std::max_element(part.memoryBytes.begin(), part.memoryBytes.end());
    b.leastMemory = std::min(b.leastMemory, memory);
    if (p.memoryLimitBytes && memory > *p.memoryLimitBytes)
      return;
    if (!b.bottleneck || part.bottleneck < *b.bottleneck)
      b.bottleneck = part.bottleneck;
  });
  return b;
}

} // namespace

TEST(Partition, OptimalAgainstEveryPartition) {
  std::mt19937_64 rng(20261125);
  auto draw = [&](int64_t hi) { return int64_t(rng() % uint64_t(hi + 1)); };
  int64_t infeasible = 0, checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t L = 1 + draw(8);
    std::vector<Layer> layers;
    for (int64_t i = 0; i < L; ++i) {
      // Zero durations and sizes sometimes: ties and empty figures.
      Layer l = layer("l" + std::to_string(i), draw(9), draw(20), draw(50), draw(100));
      l.bwdWeight = trial % 3 == 0 ? draw(7) : 0;
      layers.push_back(l);
    }
    PartitionProblem p = problem(std::move(layers), 1 + draw(L - 1));
    p.inputBytes = draw(50);
    p.microbatches = trial % 4 == 0 ? 1 + draw(4) : 0;
    if (trial % 2 == 1) {
      // A limit between no partition and every partition fitting.
      PartitionProblem free = p;
      MemoryFloor floor = leastMemory(free);
      ASSERT_EQ(floor.bytes, bruteForce(free).leastMemory) << "trial " << trial;
      p.memoryLimitBytes = std::max<int64_t>(1, floor.bytes - 20 + draw(80));
    }
    ASSERT_EQ(p.check(), "");
    Brute brute = bruteForce(p);
    PartitionResult dp = partitionLayers(p);
    ASSERT_EQ(dp.ok(), brute.bottleneck.has_value())
        << "trial " << trial << ": " << dp.error;
    ++checked;
    if (!dp.ok()) {
      ++infeasible;
      EXPECT_EQ(dp.error.rfind("no partition into ", 0), 0u) << dp.error;
      continue;
    }
    EXPECT_EQ(dp.partition.bottleneck, *brute.bottleneck) << "trial " << trial;
    EXPECT_EQ(dp.partition.verify(p), "") << "trial " << trial;
  }
  EXPECT_EQ(checked, 3000);
  // The limits drawn cover both outcomes.
  EXPECT_GT(infeasible, 100);
  EXPECT_LT(infeasible, 1400);
}

TEST(Partition, BottleneckAndFigures) {
  // Times 3, 6, 9, 3, 3, 3 (fwd + bwd) into 3 stages: [3 6] [9] [3 3 3].
  PartitionProblem p =
      problem({layer("a", 1, 2, 10, 100), layer("b", 2, 4, 20, 200), layer("c", 3, 6, 30, 300),
               layer("d", 1, 2, 40, 400), layer("e", 1, 2, 50, 500), layer("f", 1, 2, 60, 600)},
              3);
  p.inputBytes = 5;
  PartitionResult r = partitionLayers(p);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.partition.starts, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(r.partition.layerCounts(6), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(r.partition.fwd, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(r.partition.bwd, (std::vector<int64_t>{6, 6, 6}));
  EXPECT_EQ(r.partition.bwdWeight, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(r.partition.bottleneck, 9);
  // Inputs: the data, then the act of layers b and c.
  EXPECT_EQ(r.partition.inputBytes, (std::vector<int64_t>{5, 20, 30}));
  EXPECT_EQ(r.partition.weightBytes, (std::vector<int64_t>{300, 300, 1500}));
  // weights + (S - s) x input.
  EXPECT_EQ(r.partition.memoryBytes, (std::vector<int64_t>{315, 340, 1530}));
  EXPECT_EQ(r.partition.verify(p), "");

  PartitionResult u = uniformPartition(p);
  ASSERT_TRUE(u.ok()) << u.error;
  EXPECT_EQ(u.partition.layerCounts(6), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(u.partition.bottleneck, 12);
}

TEST(Partition, MicrobatchesBoundWhatAStageKeeps) {
  PartitionProblem p = problem({layer("a", 1, 1, 10, 0), layer("b", 1, 1, 10, 0),
                                layer("c", 1, 1, 10, 0), layer("d", 1, 1, 10, 0)},
                               4);
  p.inputBytes = 10;
  EXPECT_EQ(partitionLayers(p).partition.memoryBytes, (std::vector<int64_t>{40, 30, 20, 10}));
  p.microbatches = 2;
  EXPECT_EQ(p.inFlight(0), 2);
  EXPECT_EQ(p.inFlight(3), 1);
  EXPECT_EQ(partitionLayers(p).partition.memoryBytes, (std::vector<int64_t>{20, 20, 20, 10}));
}

TEST(Partition, MemoryLimitMovesTheBoundary) {
  // Times 8, 2, 2, 8: [embed x] [y head] is best (10), but stage 1 would
  // keep x's 1000-byte output; [embed] [x y head] keeps 1 byte but its 30
  // bytes of weights make 31. Under 30 bytes only [embed x y] [head] fits.
  PartitionProblem p = problem({layer("embed", 4, 4, 1, 10), layer("x", 1, 1, 1000, 10),
                                layer("y", 1, 1, 1, 10), layer("head", 4, 4, 1, 10)},
                               2);
  PartitionResult free = partitionLayers(p);
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free.partition.layerCounts(4), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(free.partition.bottleneck, 10);
  p.memoryLimitBytes = 30;
  PartitionResult tight = partitionLayers(p);
  ASSERT_TRUE(tight.ok()) << tight.error;
  EXPECT_EQ(tight.partition.layerCounts(4), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(tight.partition.bottleneck, 12);
  EXPECT_EQ(tight.partition.memoryBytes, (std::vector<int64_t>{30, 11}));
  EXPECT_EQ(tight.partition.verify(p), "");
  EXPECT_EQ(uniformPartition(p).error,
            "stage 1 cannot fit in 30 bytes: with equal layer counts it holds "
            "layers 2..3 ('y'..'head'): weights 20 + 1 x input 1000 = 1020 bytes");
}

TEST(Partition, ImpossibleLimitNamesTheStage) {
  // [embed] [block head]: 65664 and 69732; [embed block] [head]: 65764
  // and 69632, the least: stage 1 needs 69632 bytes whatever happens.
  PartitionProblem p = problem({layer("embed", 1, 1, 4096, 65536), layer("block", 1, 1, 4096, 100),
                                layer("head", 1, 1, 8, 65536)},
                               2);
  p.inputBytes = 64;
  p.memoryLimitBytes = 60000;
  PartitionResult r = partitionLayers(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error, "no partition into 2 stages fits in 60000 bytes per stage: the one "
                     "needing the least memory still needs 69632 bytes on stage 1 (layer 2 "
                     "('head'): weights 65536 + 1 x input 4096 = 69632 bytes)");
  MemoryFloor floor = leastMemory(p);
  EXPECT_EQ(floor.bytes, 69632);
  EXPECT_EQ(floor.stage, 1);
  p.memoryLimitBytes = 69631;
  EXPECT_FALSE(partitionLayers(p).ok());
  p.memoryLimitBytes = 69632;
  PartitionResult fits = partitionLayers(p);
  ASSERT_TRUE(fits.ok()) << fits.error;
  EXPECT_EQ(fits.partition.memoryBytes, (std::vector<int64_t>{65764, 69632}));
}

TEST(Partition, TiesPutTheLastStageAsLateAsPossible) {
  PartitionProblem p = problem({layer("a", 1, 0), layer("b", 1, 0), layer("c", 1, 0),
                                layer("d", 0, 0), layer("e", 0, 0)},
                               2);
  PartitionResult r = partitionLayers(p);
  ASSERT_TRUE(r.ok());
  // [a] [b c d e] and [a b] [c d e] both reach 2: the last stage starts
  // at c, the latest of the two.
  EXPECT_EQ(r.partition.bottleneck, 2);
  EXPECT_EQ(r.partition.starts, (std::vector<int64_t>{0, 2}));
  PartitionProblem zeros = problem({layer("a", 0, 0), layer("b", 0, 0), layer("c", 0, 0)}, 2);
  EXPECT_EQ(partitionLayers(zeros).partition.starts, (std::vector<int64_t>{0, 2}));
  // Times 2, 0, 1: [2] [0 1] and [2 0] [1] both reach 2; layer counts
  // [2, 1], not [1, 2].
  PartitionProblem middle =
      problem({layer("a", 2, 0), layer("b", 0, 0), layer("c", 1, 0)}, 2);
  EXPECT_EQ(partitionLayers(middle).partition.layerCounts(3),
            (std::vector<int64_t>{2, 1}));
}

TEST(Partition, Uniform) {
  std::vector<Layer> layers;
  for (int i = 0; i < 10; ++i)
    layers.push_back(layer("l" + std::to_string(i), 1, 2));
  PartitionResult u = uniformPartition(problem(layers, 4));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.partition.layerCounts(10), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(u.partition.bottleneck, 9);
  EXPECT_EQ(u.partition.verify(problem(layers, 4)), "");
  EXPECT_EQ(uniformPartition(problem(layers, 10)).partition.layerCounts(10),
            std::vector<int64_t>(10, 1));
}

TEST(Partition, ThousandsOfLayers) {
  std::mt19937_64 rng(7);
  std::vector<Layer> layers;
  for (int i = 0; i < 3000; ++i)
    layers.push_back(layer("l" + std::to_string(i), 1 + int64_t(rng() % 100),
                           1 + int64_t(rng() % 200), 4096, 1 << 20));
  PartitionProblem p = problem(std::move(layers), 32);
  PartitionResult r = partitionLayers(p);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.partition.verify(p), "");
  EXPECT_LE(r.partition.bottleneck, uniformPartition(p).partition.bottleneck);
  // No stage can be below the mean.
  int64_t total = 0;
  for (size_t i = 0; i < p.layers.size(); ++i)
    total += p.layerTime(i);
  EXPECT_GE(r.partition.bottleneck * 32, total);
}

TEST(Partition, VerifyCatchesCorruption) {
  PartitionProblem p = problem({layer("a", 1, 1, 1, 1), layer("b", 2, 2, 1, 1),
                                layer("c", 3, 3, 1, 1)},
                               2);
  Partition good = partitionLayers(p).partition;
  ASSERT_EQ(good.verify(p), "");
  Partition bad = good;
  bad.starts = {0, 0};
  EXPECT_EQ(bad.verify(p), "stage 1 starts at layer 0: stages must be non-empty and in order");
  bad = good;
  bad.bottleneck = 1;
  EXPECT_EQ(bad.verify(p), "the bottleneck 1 is not the slowest stage's time 6");
  bad = good;
  bad.fwd[0] += 1;
  EXPECT_EQ(bad.verify(p), "the per-stage durations are not the sums of their layers");
  bad = good;
  bad.starts.pop_back();
  EXPECT_EQ(bad.verify(p), "1 stages, expected 2");
  p.memoryLimitBytes = 1;
  EXPECT_EQ(good.verify(p), "stage 0 needs 2 bytes, more than the limit 1");
}

TEST(Partition, CheckRefusesBadInput) {
  EXPECT_EQ(problem({}, 1).check(), "no layers to partition");
  std::vector<Layer> two{layer("a", 1, 1), layer("b", 1, 1)};
  EXPECT_EQ(problem(two, 3).check(), "cannot split 2 layers into 3 stages: every stage needs a layer");
  EXPECT_EQ(problem(two, 0).check(), "the stage count must be positive, got 0");
  EXPECT_EQ(partitionLayers(problem(two, 3)).error,
            "cannot split 2 layers into 3 stages: every stage needs a layer");
  EXPECT_EQ(uniformPartition(problem(two, 3)).error,
            "cannot split 2 layers into 3 stages: every stage needs a layer");
  std::vector<Layer> negative{layer("a", 1, 1), layer("b", 1, -2)};
  EXPECT_EQ(problem(negative, 1).check(), "layers[1] ('b'): bwd = -2 is not in [0, 2^53)");
  std::vector<Layer> huge{layer("a", int64_t(1) << 53, 1)};
  EXPECT_EQ(problem(huge, 1).check(),
            "layers[0] ('a'): fwd = 9007199254740992 is not in [0, 2^53)");
  std::vector<Layer> many(1100, layer("x", (int64_t(1) << 53) - 1, (int64_t(1) << 53) - 1));
  EXPECT_EQ(problem(many, 1).check(),
            "the layers' total time overflows 64 bits at layers[512] ('x')");
  std::vector<Layer> heavy(1100, layer("w", 0, 0, 0, (int64_t(1) << 53) - 1));
  EXPECT_EQ(problem(heavy, 1).check(),
            "the layers' total weight bytes overflow 64 bits at layers[1024] ('w')");
  std::vector<Layer> tooMany(size_t(kMaxPartitionLayers) + 1, layer("x", 1, 1));
  EXPECT_EQ(problem(tooMany, 1).check(), "16385 layers, more than the supported 16384");
  std::vector<Layer> wide(8192, layer("x", 1, 1));
  EXPECT_EQ(problem(wide, 4096).check(),
            "4096 stages x 8192 layers make more than 16777216 cells of the dynamic program");
  // Within the cells, but not within the steps: 65 stages of 16384 layers.
  std::vector<Layer> deep(size_t(kMaxPartitionLayers), layer("x", 1, 1));
  EXPECT_EQ(problem(deep, 65).check(),
            "65 stages x 16384^2 layers make more than 17179869184 steps of the "
            "dynamic program: fewer stages or layers");
  EXPECT_EQ(problem(deep, 64).check(), "");
  PartitionProblem p = problem(two, 1);
  p.memoryLimitBytes = 0;
  EXPECT_EQ(p.check(), "the memory limit 0 bytes is not in [1, 2^53)");
  p.memoryLimitBytes.reset();
  p.inputBytes = -1;
  EXPECT_EQ(p.check(), "the input activation = -1 is not in [0, 2^53)");
  p.inputBytes = 0;
  p.microbatches = -1;
  EXPECT_EQ(p.check(), "the microbatch count must not be negative, got -1");
}

TEST(Partition, SaturatedMemoryIsHugeNotForbidden) {
  // 1100 stages x a 2^53 - 1 byte input overflow 64 bits: saturated.
  const int64_t big = (int64_t(1) << 53) - 1;
  std::vector<Layer> layers(1100, layer("x", 1, 1, big, 0));
  PartitionProblem p = problem(layers, 1100);
  p.inputBytes = big;
  ASSERT_EQ(p.check(), "");
  MemoryFloor floor = leastMemory(p);
  EXPECT_EQ(floor.bytes, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(floor.stage, 0);
  p.memoryLimitBytes = big;
  EXPECT_EQ(partitionLayers(p).error,
            "no partition into 1100 stages fits in 9007199254740991 bytes per stage: the one "
            "needing the least memory still needs 9223372036854775807 bytes on stage 0 "
            "(layer 0 ('x'): weights 0 + 1100 x input 9007199254740991 = "
            "9223372036854775807 bytes)");
}
