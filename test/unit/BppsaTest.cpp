// BPPSA's scan graph (lib/Scheduling/Bppsa.cpp): the jobs for S = 4 and 8
// pinned, the step count 2 ceil(log2 S), the symbolic verifier against
// corrupted graphs, the shape checks, the cost model and the crossover.
#include "pipesched/Scheduling/Bppsa.h"

#include <gtest/gtest.h>

using namespace pipesched::scheduling;

namespace {

std::string render(const BppsaGraph &g) {
  std::string out;
  for (uint32_t i = 0; i < g.jobs.size(); ++i)
    out += std::to_string(i) + ": " + renderBppsaJob(g, i) + "\n";
  return out;
}

BppsaShape chain(int64_t stages, int64_t workers, int64_t width) {
  BppsaShape s;
  s.stages = stages;
  s.workers = workers;
  s.width = width;
  return s;
}

uint32_t find(const BppsaGraph &g, BppsaJobKind kind, int64_t stageOrPosition) {
  for (uint32_t i = 0; i < g.jobs.size(); ++i) {
    const BppsaJob &j = g.jobs[i];
    if (j.kind == kind && (j.stage == stageOrPosition || j.position == stageOrPosition))
      return i;
  }
  ADD_FAILURE() << "no such job";
  return 0;
}

} // namespace

TEST(BppsaScan, FourStages) {
  BppsaShape s = chain(4, 4, 2);
  ASSERT_EQ(checkBppsa(s), "");
  BppsaGraph g = buildBppsaScan(s);
  EXPECT_EQ(render(g), "0: b0 loss-grad s3 [0,0] w3 (d=2)\n"
                       "1: b0 jacobian s3 [1,1] w3 (d=4)\n"
                       "2: b0 jacobian s2 [2,2] w2 (d=4)\n"
                       "3: b0 jacobian s1 [3,3] w1 (d=4)\n"
                       "4: b0 up L0 @1 [0,1] JV w3 <- 0 1 (d=4)\n"
                       "5: b0 up L0 @3 [2,3] JJ w1 <- 2 3 (d=8)\n"
                       "6: b0 up L1 @3 [0,3] JV w1 <- 4 5 (d=4)\n"
                       "7: b0 down L0 @3 [0,2] JV w2 <- 4 2 (d=4)\n"
                       "8: b0 weight-grad s3 [0,0] w3 <- 0 (d=4)\n"
                       "9: b0 weight-grad s2 [0,1] w2 <- 4 (d=4)\n"
                       "10: b0 weight-grad s1 [0,2] w1 <- 7 (d=4)\n"
                       "11: b0 weight-grad s0 [0,3] w0 <- 6 (d=4)\n");
  EXPECT_EQ(verifyBppsaScan(s, g), "");
  BppsaMetrics m = measureBppsa(s, g);
  EXPECT_EQ(m.steps, 4);
  EXPECT_EQ(m.productDepth, 2);
  // Jacobian 4, up 4 (JV from G) + up 4, weight 4 vs 2 + 3 * 4 + 4.
  EXPECT_EQ(m.criticalPath, 20);
  EXPECT_EQ(m.sequentialPath, 18);
}

// The S = 8 scan of docs/bppsa.md: the up-sweep's root is g_0, the
// down-sweep's first step is all moves, the rest are JV products.
TEST(BppsaScan, EightStages) {
  BppsaShape s = chain(8, 8, 1);
  BppsaGraph g = buildBppsaScan(s);
  EXPECT_EQ(render(g), "0: b0 loss-grad s7 [0,0] w7 (d=1)\n"
                       "1: b0 jacobian s7 [1,1] w7 (d=1)\n"
                       "2: b0 jacobian s6 [2,2] w6 (d=1)\n"
                       "3: b0 jacobian s5 [3,3] w5 (d=1)\n"
                       "4: b0 jacobian s4 [4,4] w4 (d=1)\n"
                       "5: b0 jacobian s3 [5,5] w3 (d=1)\n"
                       "6: b0 jacobian s2 [6,6] w2 (d=1)\n"
                       "7: b0 jacobian s1 [7,7] w1 (d=1)\n"
                       "8: b0 up L0 @1 [0,1] JV w7 <- 0 1 (d=1)\n"
                       "9: b0 up L0 @3 [2,3] JJ w5 <- 2 3 (d=1)\n"
                       "10: b0 up L0 @5 [4,5] JJ w3 <- 4 5 (d=1)\n"
                       "11: b0 up L0 @7 [6,7] JJ w1 <- 6 7 (d=1)\n"
                       "12: b0 up L1 @3 [0,3] JV w5 <- 8 9 (d=1)\n"
                       "13: b0 up L1 @7 [4,7] JJ w1 <- 10 11 (d=1)\n"
                       "14: b0 up L2 @7 [0,7] JV w1 <- 12 13 (d=1)\n"
                       "15: b0 down L1 @7 [0,5] JV w3 <- 12 10 (d=1)\n"
                       "16: b0 down L0 @3 [0,2] JV w6 <- 8 2 (d=1)\n"
                       "17: b0 down L0 @5 [0,4] JV w4 <- 12 4 (d=1)\n"
                       "18: b0 down L0 @7 [0,6] JV w2 <- 15 6 (d=1)\n"
                       "19: b0 weight-grad s7 [0,0] w7 <- 0 (d=1)\n"
                       "20: b0 weight-grad s6 [0,1] w6 <- 8 (d=1)\n"
                       "21: b0 weight-grad s5 [0,2] w5 <- 16 (d=1)\n"
                       "22: b0 weight-grad s4 [0,3] w4 <- 12 (d=1)\n"
                       "23: b0 weight-grad s3 [0,4] w3 <- 17 (d=1)\n"
                       "24: b0 weight-grad s2 [0,5] w2 <- 15 (d=1)\n"
                       "25: b0 weight-grad s1 [0,6] w1 <- 18 (d=1)\n"
                       "26: b0 weight-grad s0 [0,7] w0 <- 14 (d=1)\n");
  BppsaMetrics m = measureBppsa(s, g);
  EXPECT_EQ(m.steps, 6);
  EXPECT_EQ(m.productDepth, 4); // up 0, 1, then down 1, 0: [0,6]
  EXPECT_EQ(m.criticalPath, 6);
  EXPECT_EQ(m.sequentialPath, 9);
}

TEST(BppsaScan, StepsAreTwiceCeilLog2) {
  std::vector<int64_t> sizes;
  for (int64_t S = 2; S <= 64; ++S)
    sizes.push_back(S);
  sizes.push_back(1000);
  for (int64_t S : sizes) {
    SCOPED_TRACE("S = " + std::to_string(S));
    BppsaShape s = chain(S, 4, 3);
    s.microbatches = 3;
    ASSERT_EQ(checkBppsa(s), "");
    BppsaGraph g = buildBppsaScan(s);
    EXPECT_EQ(verifyBppsaScan(s, g), "");
    int32_t log = 0;
    while ((int64_t(1) << log) < S)
      ++log;
    BppsaMetrics m = measureBppsa(s, g);
    EXPECT_EQ(m.steps, 2 * log);
    EXPECT_LE(m.productDepth, 2 * log);
    EXPECT_GE(m.productDepth, log); // the up-sweep's spine to g_0
    // Work-efficient: fewer than 2 S products per microbatch.
    size_t combines = 0;
    for (const BppsaJob &j : g.jobs)
      combines += j.kind == BppsaJobKind::UpSweep || j.kind == BppsaJobKind::DownSweep;
    EXPECT_LT(combines, size_t(2 * S * s.microbatches));
  }
}

TEST(BppsaScan, OneStageHasNoScan) {
  BppsaShape s = chain(1, 1, 4);
  BppsaGraph g = buildBppsaScan(s);
  EXPECT_EQ(render(g), "0: b0 loss-grad s0 [0,0] w0 (d=4)\n"
                       "1: b0 weight-grad s0 [0,0] w0 <- 0 (d=16)\n");
  EXPECT_EQ(verifyBppsaScan(s, g), "");
  EXPECT_EQ(measureBppsa(s, g).steps, 0);
}

TEST(BppsaScan, SpreadPlacementRoundRobinsEachLevel) {
  BppsaShape s = chain(8, 3, 1);
  s.placement = ScanPlacement::Spread;
  BppsaGraph g = buildBppsaScan(s);
  EXPECT_EQ(verifyBppsaScan(s, g), "");
  // Up level 0: four combines on workers 0, 1, 2, 0.
  std::vector<int64_t> workers;
  for (const BppsaJob &j : g.jobs)
    if (j.kind == BppsaJobKind::UpSweep && j.level == 0)
      workers.push_back(j.worker);
  EXPECT_EQ(workers, (std::vector<int64_t>{0, 1, 2, 0}));
}

TEST(BppsaVerify, SwappedOperands) {
  BppsaShape s = chain(8, 8, 1);
  BppsaGraph g = buildBppsaScan(s);
  BppsaJob &j = g.jobs[find(g, BppsaJobKind::UpSweep, 3)];
  std::swap(j.inputs[0], j.inputs[1]);
  EXPECT_NE(verifyBppsaScan(s, g).find("A <> B = B A does not commute"), std::string::npos)
      << verifyBppsaScan(s, g);
}

TEST(BppsaVerify, MistypedProduct) {
  BppsaShape s = chain(4, 4, 1);
  BppsaGraph g = buildBppsaScan(s);
  g.jobs[find(g, BppsaJobKind::UpSweep, 1)].product = Product::JJ;
  EXPECT_EQ(verifyBppsaScan(s, g),
            "bppsa: job 4 (b0 up L0 @1 [0,1] JJ w3 <- 0 1 (d=1)) is typed JJ but its left "
            "operand holds G");
}

TEST(BppsaVerify, MissingWeightGradient) {
  BppsaShape s = chain(4, 4, 1);
  BppsaGraph g = buildBppsaScan(s);
  g.jobs.pop_back(); // stage 0's
  EXPECT_EQ(verifyBppsaScan(s, g), "bppsa: microbatch 0 has no weight gradient of stage 0");
}

TEST(BppsaVerify, EdgeToALaterJob) {
  BppsaShape s = chain(4, 4, 1);
  BppsaGraph g = buildBppsaScan(s);
  g.jobs[4].inputs[1] = 9;
  EXPECT_NE(verifyBppsaScan(s, g).find("reads job 9, which is not made before it"),
            std::string::npos);
}

TEST(BppsaVerify, WrongPrefix) {
  BppsaShape s = chain(8, 8, 1);
  BppsaGraph g = buildBppsaScan(s);
  BppsaJob &w = g.jobs[find(g, BppsaJobKind::WeightGradient, 2)];
  w.inputs[0] = find(g, BppsaJobKind::DownSweep, 5); // [0,4]: stage 3's
  EXPECT_NE(verifyBppsaScan(s, g).find("reads [0,4], not stage 2's output gradient [0,5]"),
            std::string::npos)
      << verifyBppsaScan(s, g);
}

TEST(BppsaCheck, RefusesBeforeAllocating) {
  BppsaShape s = chain(0, 1, 1);
  EXPECT_EQ(checkBppsa(s), "bppsa: stages = 0 is outside [1, 1048576]");
  s = chain(int64_t(1) << 40, 1, 1);
  EXPECT_EQ(checkBppsa(s), "bppsa: stages = 1099511627776 is outside [1, 1048576]");
  s = chain(1 << 20, 8, 4);
  s.microbatches = 1 << 20;
  EXPECT_EQ(checkBppsa(s),
            "bppsa: 1048576 stages x 1048576 microbatches would make more than 16777216 jobs");
  s = chain(8, 8, 4);
  s.form = JacobianForm::Banded;
  s.band = 5;
  EXPECT_EQ(checkBppsa(s), "bppsa: band = 5 is outside [1, 4]");
  s = chain(2, 2, 4);
  s.stageWorker = {0, 2};
  EXPECT_EQ(checkBppsa(s), "bppsa: stage 1 is placed on worker 2, outside [0, 2)");
}

TEST(BppsaCost, Formulas) {
  BppsaShape s = chain(8, 8, 4);
  s.rows = 2;
  EXPECT_EQ(jacobianDuration(s), 2 * 16);          // H^2 per row
  EXPECT_EQ(productDuration(s, Product::JJ, 4, 4), 2 * 64); // H^3
  EXPECT_EQ(productDuration(s, Product::JV, 4, 4), 2 * 16); // H^2
  EXPECT_EQ(inputStepDuration(s), 2 * 16);
  EXPECT_EQ(weightGradientDuration(s), 2 * 16);
  s.layers = 2; // the second layer's factor is composed: + H * H * H
  EXPECT_EQ(jacobianDuration(s), 2 * (16 + 64));
  s.macsPerUnit = 100;
  EXPECT_EQ(jacobianDuration(s), 2); // ceil(160 / 100)

  BppsaShape band = chain(8, 8, 16);
  band.form = JacobianForm::Banded;
  band.band = 3;
  EXPECT_EQ(productNonzeros(band, 1), 3);
  EXPECT_EQ(productNonzeros(band, 2), 5);
  EXPECT_EQ(productNonzeros(band, 8), 16); // 17, capped at the width
  EXPECT_EQ(productDuration(band, Product::JJ, 3, 5), 16 * 3 * 5);
  EXPECT_EQ(productDuration(band, Product::JV, 16, 3), 16 * 3);

  BppsaShape diagonal = chain(8, 8, 16);
  diagonal.form = JacobianForm::Diagonal;
  EXPECT_EQ(productDuration(diagonal, Product::JJ, 1, 1), 16);
  EXPECT_EQ(jacobianDuration(diagonal), 16);
}

// Where BPPSA wins: many thin stages. Dense, one row, W = 8.
TEST(BppsaCost, Crossover) {
  auto measure = [](int64_t S, int64_t H) {
    BppsaShape s = chain(S, 8, H);
    return measureBppsa(s, buildBppsaScan(s));
  };
  // H = 4: the critical path loses at S = 8, wins from S = 16.
  EXPECT_EQ(measure(8, 4).criticalPath, 176);
  EXPECT_EQ(measure(8, 4).sequentialPath, 132);
  EXPECT_EQ(measure(16, 4).criticalPath, 240);
  EXPECT_EQ(measure(16, 4).sequentialPath, 260);
  BppsaMetrics thin = measure(1024, 4);
  EXPECT_EQ(thin.criticalPath, 704);
  EXPECT_EQ(thin.sequentialPath, 16388);
  // ... and the work it costs: 3.5 times back-propagation's.
  EXPECT_EQ(thin.work, 113956);
  EXPECT_EQ(thin.sequentialWork, 32756);
  EXPECT_EQ(thin.workersBound, 14245); // ceil(113956 / 8) on 8 workers
  // H = 64: JJ products cost H^3 and BPPSA loses until S ~ 1024.
  EXPECT_GT(measure(4, 64).criticalPath, measure(4, 64).sequentialPath);
  EXPECT_GT(measure(256, 64).criticalPath, measure(256, 64).sequentialPath);
  EXPECT_LT(measure(1024, 64).criticalPath, measure(1024, 64).sequentialPath);
}
