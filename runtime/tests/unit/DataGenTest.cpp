// The data generator's core (src/data_gen.h), shared by the host (data.cpp)
// and the CUDA backend's kernels: the host path gives the bits it gave
// before the core was shared (fingerprints), and the core applied in the
// kernels' order (an element per thread; a row's class by a block's tree)
// gives exactly what makeInput and makeTargets give.
#include "model/data.h"
#include "model/data_gen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace pipesched::runtime;
using datagen::Candidate;

namespace {

// FNV-1a over the floats' bits.
uint64_t fingerprint(const std::vector<float> &v) {
  uint64_t h = 1469598103934665603ull;
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    for (int i = 0; i < 4; ++i) {
      h ^= (bits >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

struct Case {
  uint64_t seed;
  int64_t rows, hidden;
  int step, microbatch;
  uint64_t input, mse, ce; // fingerprints of the host path before data_gen.h
};

const Case kCases[] = {
    {1u, 8, 64, 0, 0, 0x54c53bfc42b1767aull, 0x11391b038ad8a3f3ull, 0xf246b4b9f60e6356ull},
    {7u, 5, 33, 3, 2, 0xcf799ca02de285c6ull, 0x0deccbd0c046b94eull, 0x749cbca0a243fb13ull},
    {12345u, 16, 1024, 2, 7, 0x8063d99261c3f59bull, 0xe5b0e987bb30206dull,
     0x725d6530cc5e59d3ull},
    {1u, 3, 1, 0, 1, 0x67ddc6bc782c9a10ull, 0x25201ff883fa6990ull, 0xc327e8bf29be1593ull},
};

DataSpec spec(const Case &c, LossKind loss) {
  DataSpec d;
  d.seed = c.seed;
  d.rows = c.rows;
  d.hidden = c.hidden;
  d.microbatches = 8;
  d.loss = loss;
  return d;
}

// ceTargetKernel's order (cuda_kernels.cu): kThreads threads, thread j folds
// k = j, j + kThreads, ... with better(); each warp folds its lanes by
// shuffle-down (offsets 16 .. 1: lane i takes lane i + offset's value, its
// own past the warp), then the first warp folds the warps' results so.
constexpr int kThreads = 256, kWarp = 32, kWarps = kThreads / kWarp;
const Candidate kNone{-INFINITY, INT64_MAX};

Candidate warpFold(std::vector<Candidate> lanes) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    for (int i = 0; i < kWarp; ++i) // ascending: lane i reads i + offset first
      lanes[size_t(i)] = datagen::better(lanes[size_t(i)],
                                         i + offset < kWarp ? lanes[size_t(i + offset)]
                                                            : lanes[size_t(i)]);
  return lanes[0];
}

Candidate blockOrder(const std::vector<Candidate> &row) {
  std::vector<Candidate> threads(kThreads, kNone);
  for (size_t k = 0; k < row.size(); ++k)
    threads[k % kThreads] = datagen::better(threads[k % kThreads], row[k]);
  std::vector<Candidate> warps(kWarp, kNone);
  for (int w = 0; w < kWarps; ++w)
    warps[size_t(w)] = warpFold(std::vector<Candidate>(threads.begin() + w * kWarp,
                                                       threads.begin() + (w + 1) * kWarp));
  return warpFold(warps);
}

TEST(DataGen, HostPathKeepsItsBits) {
  for (const Case &c : kCases) {
    std::vector<float> x(size_t(c.rows * c.hidden)), t(x.size()), ce(size_t(c.rows));
    makeInput(spec(c, LossKind::Mse), c.step, c.microbatch, x.data());
    makeTargets(spec(c, LossKind::Mse), c.step, c.microbatch, t.data());
    makeTargets(spec(c, LossKind::CrossEntropy), c.step, c.microbatch, ce.data());
    EXPECT_EQ(fingerprint(x), c.input) << "seed " << c.seed;
    EXPECT_EQ(fingerprint(t), c.mse) << "seed " << c.seed;
    EXPECT_EQ(fingerprint(ce), c.ce) << "seed " << c.seed;
  }
}

// What the kernels compute, element by element and row by row, is exactly
// what data.cpp gives the CPU backend and the reference.
TEST(DataGen, KernelOrderGivesTheHostsValues) {
  for (const Case &c : kCases) {
    const uint64_t key = datagen::key(c.seed, c.step, c.microbatch);
    const size_t n = size_t(c.rows * c.hidden);
    std::vector<float> x(n), t(n), ce(size_t(c.rows));
    makeInput(spec(c, LossKind::Mse), c.step, c.microbatch, x.data());
    makeTargets(spec(c, LossKind::Mse), c.step, c.microbatch, t.data());
    makeTargets(spec(c, LossKind::CrossEntropy), c.step, c.microbatch, ce.data());
    for (size_t k = 0; k < n; ++k) {
      const float dx = datagen::input(key, int64_t(k)), dt = datagen::mseTarget(key, int64_t(k));
      ASSERT_EQ(std::memcmp(&dx, &x[k], sizeof dx), 0) << "input " << k;
      ASSERT_EQ(std::memcmp(&dt, &t[k], sizeof dt), 0) << "target " << k;
    }
    for (int64_t r = 0; r < c.rows; ++r) {
      std::vector<Candidate> row;
      for (int64_t k = 0; k < c.hidden; ++k)
        row.push_back(datagen::candidate(key, r, c.hidden, k));
      const Candidate best = blockOrder(row);
      EXPECT_EQ(float(best.index), ce[size_t(r)]) << "seed " << c.seed << ", row " << r;
      EXPECT_EQ(datagen::ceTarget(key, r, c.hidden), best.index);
    }
  }
}

// Equal largest inputs anywhere in a row: the tree, like the host's scan,
// picks the first, whichever thread and warp hold them.
TEST(DataGen, TiesGoToTheFirstLargestInput) {
  for (int64_t H : {2, 31, 257, 1024, 4099})
    for (int64_t first : {int64_t(0), int64_t(1), H / 3, H - 2}) {
      std::vector<Candidate> row;
      for (int64_t k = 0; k < H; ++k)
        row.push_back(Candidate{-0.5f + float(k % 7) * 0.01f, k});
      for (int64_t k = first; k < H; k += 97)
        row[size_t(k)].value = 0.75f;
      row[size_t(H - 1)].value = 0.75f;
      EXPECT_EQ(blockOrder(row).index, first) << "H " << H;
      Candidate scan = row[0];
      for (const Candidate &c : row)
        scan = datagen::better(scan, c);
      EXPECT_EQ(scan.index, first) << "H " << H;
    }
}

} // namespace
