//===- CalibrationTest.cpp - measured costs as a step's durations ---------===//

#include "pipesched/Scheduling/Calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace pipesched::scheduling;

namespace {
MeasuredCosts twoStages() {
  MeasuredCosts m;
  m.fwd = {1000.4, 1500.6};
  m.bwd = {2000, 3000.5};
  m.actBytes = 4096;
  m.weightBytes = 16640;
  m.latencyNs = 2500;
  m.nsPerByte = 0.5;
  return m;
}
} // namespace

TEST(Calibration, RoundsToNanosecondTicks) {
  MeasuredCosts m = twoStages();
  ASSERT_EQ(m.check(), "");
  CalibratedCosts c = calibrate(m, /*tickNs=*/1, /*split=*/false);
  EXPECT_EQ(c.fwd, (std::vector<int64_t>{1000, 1501}));
  EXPECT_EQ(c.bwd, (std::vector<int64_t>{2000, 3001})); // half away from 0
  EXPECT_TRUE(c.bwdWeight.empty());
  EXPECT_EQ(c.transfer, 2500 + 2048); // latency + 0.5 ns/B x 4096 B
  EXPECT_EQ(c.actBytes, 4096);
  EXPECT_EQ(c.weightBytes, 16640);
  EXPECT_EQ(c.verify(m, false), "");
}

TEST(Calibration, CoarserTicks) {
  CalibratedCosts c = calibrate(twoStages(), /*tickNs=*/1000, false);
  EXPECT_EQ(c.fwd, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c.bwd, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.transfer, 5); // 4548 ns
}

TEST(Calibration, SplitHalvesKeptOrSummed) {
  MeasuredCosts m = twoStages();
  m.bwdWeight = {700, 800};
  ASSERT_EQ(m.check(), "");
  CalibratedCosts split = calibrate(m, 1, /*split=*/true);
  EXPECT_EQ(split.bwd, (std::vector<int64_t>{2000, 3001}));
  EXPECT_EQ(split.bwdWeight, (std::vector<int64_t>{700, 800}));
  EXPECT_EQ(split.verify(m, true), "");
  CalibratedCosts whole = calibrate(m, 1, /*split=*/false);
  EXPECT_EQ(whole.bwd, (std::vector<int64_t>{2700, 3801}));
  EXPECT_TRUE(whole.bwdWeight.empty());
  // A whole result does not pass as a split one.
  EXPECT_NE(whole.verify(m, true), "");
}

TEST(Calibration, CheckRefusesWhatIsNotADuration) {
  struct Case {
    void (*edit)(MeasuredCosts &);
    const char *message;
  } cases[] = {
      {[](MeasuredCosts &m) { m.fwd.clear(); }, "no stage was measured"},
      {[](MeasuredCosts &m) { m.bwd.pop_back(); }, "fwd lists 2 stages, bwd 1"},
      {[](MeasuredCosts &m) { m.bwdWeight = {1}; }, "fwd lists 2 stages, bwd_w 1"},
      {[](MeasuredCosts &m) { m.fwd[1] = -1; }, "fwd[1] = -1 is not a duration"},
      {[](MeasuredCosts &m) { m.bwd[0] = std::nan(""); }, "bwd[0] = nan is not a duration"},
      {[](MeasuredCosts &m) { m.fwd[0] = std::numeric_limits<double>::infinity(); },
       "fwd[0] = inf is not a duration"},
      {[](MeasuredCosts &m) { m.fwd[0] = 1e17; }, "is not a duration"},
      {[](MeasuredCosts &m) { m.actBytes = -1; }, "sizes must be non-negative"},
      {[](MeasuredCosts &m) { m.latencyNs = -2; }, "transfer latency = -2"},
      {[](MeasuredCosts &m) { m.nsPerByte = 1e12; m.actBytes = int64_t(1) << 40; },
       "one transfer of act_bytes takes 2^53 ns or more"},
      // Each field a duration, but their scaled product is not (an llround
      // overflow once called "the calibrated transfer is negative").
      {[](MeasuredCosts &m) {
         m.reduceBytes = 1;
         m.reduceNs = 1e15;
         m.weightBytes = 9000000000000000000;
       },
       "the all-reduce time scaled to weight_bytes (9000000000000000000 "
       "bytes, measured on 1) takes 2^53 ns or more"},
  };
  for (const Case &c : cases) {
    MeasuredCosts m = twoStages();
    c.edit(m);
    std::string error = m.check();
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "got '" << error << "', expected '" << c.message << "'";
  }
}
