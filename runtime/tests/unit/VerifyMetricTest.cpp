// --verify's metric (verify_metric.h): the normwise relative error per
// parameter tensor, judged; the element-wise one, reported.
#include "verify/verify_metric.h"

#include "model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace pipesched::runtime;

namespace {

constexpr double kTolerance = 1e-5; // --tolerance's default

// A layer of the built-in MLP's layout: W (n x n) then b (n).
std::vector<ParamTensor> layer(int64_t n) {
  return {{0, n * n, 0, ParamTensor::Kind::Weight},
          {n * n, n, 0, ParamTensor::Kind::Bias}};
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k)
    v[k] = scale * (float(k % 13) - 6.0f) / 6.0f;
  return v;
}

// What a different summation order or an FMA does to a bias whose
// element 3 nearly cancelled (a sum of terms of ~1e-2 ending at ~1e-6):
// that element moves by a few ulps of the terms, not of itself.
TEST(VerifyMetric, UlpsOnANearZeroBiasPassNormwiseNotElementwise) {
  const int64_t n = 8;
  std::vector<float> want = ramp(size_t(n * n + n), 0.05f);
  float *bias = want.data() + n * n;
  for (int64_t k = 0; k < n; ++k)
    bias[k] = 0.01f * float(k + 1);
  bias[3] = 1e-6f;
  std::vector<float> got = want;
  const float ulp = std::nextafter(0.01f, 1.0f) - 0.01f; // at the terms' scale
  got[size_t(n * n + 3)] += 4 * ulp;

  EXPECT_GT(elementwiseRelativeError(got[size_t(n * n + 3)], want[size_t(n * n + 3)]),
            kTolerance); // the old judged measure: FAILED
  WeightComparison c = compareWeights({got}, {want}, {layer(n)});
  EXPECT_TRUE(c.passes(kTolerance)) << c.normwise;
  EXPECT_LT(c.normwise, 1e-6);
  EXPECT_GT(c.elementwise, kTolerance); // still reported
  EXPECT_EQ(c.worstStage, 0);
  EXPECT_EQ(c.worst.kind, ParamTensor::Kind::Bias);
  EXPECT_EQ(c.tensors, 2u);
  EXPECT_EQ(c.params, size_t(n * n + n));
  EXPECT_EQ(c.bitwise, c.params - 1);
}

// A real error: one weight 1% off, or every weight 1e-4 off relatively.
TEST(VerifyMetric, RealErrorsFail) {
  const int64_t n = 16;
  const std::vector<float> want = ramp(size_t(n * n + n), 0.25f);
  std::vector<float> one = want;
  one[5] *= 1.01f;
  WeightComparison c = compareWeights({one}, {want}, {layer(n)});
  EXPECT_FALSE(c.passes(kTolerance)) << c.normwise;
  EXPECT_EQ(c.worst.kind, ParamTensor::Kind::Weight);

  std::vector<float> all = want;
  for (float &x : all)
    x *= 1.0001f;
  c = compareWeights({all}, {want}, {layer(n)});
  EXPECT_FALSE(c.passes(kTolerance)) << c.normwise;
  EXPECT_NEAR(c.normwise, 1e-4, 1e-6);
}

// A tensor is judged against its own norm: an error in the (small) bias
// is not diluted by the (large) weight matrix of the same stage.
TEST(VerifyMetric, EachTensorAgainstItsOwnNorm) {
  const int64_t n = 16;
  std::vector<float> want = ramp(size_t(n * n + n), 1.0f);
  for (int64_t k = 0; k < n; ++k)
    want[size_t(n * n + k)] = 1e-3f;
  std::vector<float> got = want;
  got[size_t(n * n)] = 1.1e-3f; // 10% of one bias, 1e-4 against the weights' norm
  const ParamTensor whole{0, n * n + n, -1, ParamTensor::Kind::Whole};
  EXPECT_LT(compareWeights({got}, {want}, {{whole}}).normwise, 1e-4);
  WeightComparison c = compareWeights({got}, {want}, {layer(n)});
  EXPECT_NEAR(c.normwise, 0.1 / std::sqrt(double(n)), 1e-3);
  EXPECT_EQ(c.worst.kind, ParamTensor::Kind::Bias);
  EXPECT_EQ(describe(c.worst), "layer 0 bias");
}

TEST(VerifyMetric, NonFiniteFails) {
  const int64_t n = 4;
  const std::vector<float> want = ramp(size_t(n * n + n), 0.5f);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    std::vector<float> got = want;
    got[2] = bad;
    WeightComparison c = compareWeights({want, got}, {want, want}, {layer(n), layer(n)});
    EXPECT_FALSE(c.passes(kTolerance)) << bad;
    EXPECT_FALSE(c.normwise <= kTolerance) << bad;
    EXPECT_EQ(c.nonFinite, 1u);
    EXPECT_EQ(c.firstNonFiniteStage, 1);
    EXPECT_EQ(c.firstNonFiniteIndex, 2u);
    EXPECT_EQ(c.worstStage, 1);
  }
  // A NaN in the reference fails too.
  std::vector<float> nanWant = want;
  nanWant[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compareWeights({want}, {nanWant}, {layer(n)}).passes(kTolerance));
}

// NaN is never replaced by a later, finite error.
TEST(VerifyMetric, WorstKeepsNaN) {
  double max = 0;
  EXPECT_TRUE(keepWorse(1e-7, max));
  EXPECT_TRUE(keepWorse(std::nan(""), max));
  EXPECT_FALSE(keepWorse(1.0, max));
  EXPECT_TRUE(std::isnan(max));
  // And over tensors: a NaN tensor before a differing one stays the worst.
  const int64_t n = 2;
  std::vector<float> want = ramp(size_t(n * n + n), 0.5f), got = want;
  got[0] = std::numeric_limits<float>::quiet_NaN();
  got[size_t(n * n)] += 1.0f;
  WeightComparison c = compareWeights({got}, {want}, {layer(n)});
  EXPECT_TRUE(std::isnan(c.normwise));
  EXPECT_EQ(c.worst.kind, ParamTensor::Kind::Weight);
}

// A zero reference (biases that never moved): the absolute norm.
TEST(VerifyMetric, ZeroReferenceTensorUsesTheAbsoluteNorm) {
  const std::vector<float> zero(4, 0.0f);
  EXPECT_EQ(normwiseRelativeError(zero.data(), zero.data(), 4), 0.0);
  const std::vector<float> tiny = {3e-9f, 0, 4e-9f, 0};
  EXPECT_NEAR(normwiseRelativeError(tiny.data(), zero.data(), 4), 5e-9, 1e-15);
  const std::vector<float> moved = {3e-3f, 0, 4e-3f, 0};
  EXPECT_NEAR(normwiseRelativeError(moved.data(), zero.data(), 4), 5e-3, 1e-9);
  const ParamTensor bias{0, 4, 0, ParamTensor::Kind::Bias};
  EXPECT_TRUE(compareWeights({tiny}, {zero}, {{bias}}).passes(kTolerance));
  EXPECT_FALSE(compareWeights({moved}, {zero}, {{bias}}).passes(kTolerance));
}

TEST(VerifyMetric, ScalarRelativeError) {
  EXPECT_DOUBLE_EQ(relativeError(1.5, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(relativeError(-1.0, 2.0), 1.5);
  EXPECT_EQ(relativeError(0.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(relativeError(2e-3, 0.0), 2e-3); // absolute against zero
  EXPECT_TRUE(std::isnan(relativeError(std::nan(""), 1.0)));
  EXPECT_TRUE(std::isnan(relativeError(1.0, std::nan(""))));
  EXPECT_FALSE(relativeError(HUGE_VAL, 1.0) <= kTolerance);
}

TEST(VerifyMetric, EqualWeightsNameNoWorstTensor) {
  const std::vector<float> w = ramp(20, 1.0f);
  WeightComparison c = compareWeights({w}, {w}, {layer(4)});
  EXPECT_EQ(c.normwise, 0.0);
  EXPECT_EQ(c.worstStage, -1);
  EXPECT_EQ(c.bitwise, 20u);
  EXPECT_TRUE(c.passes(0.0));
}

TEST(VerifyMetric, LayoutMustTileTheParameters) {
  const std::vector<float> w(20, 1.0f);
  EXPECT_THROW(compareWeights({w}, {w}, {layer(3)}), std::logic_error); // 12 of 20
  EXPECT_THROW(compareWeights({w}, {w},
                              {{{0, 10, 0, ParamTensor::Kind::Weight},
                                {12, 8, 0, ParamTensor::Kind::Bias}}}),
               std::logic_error); // a gap
  EXPECT_NO_THROW(compareWeights({w}, {w}, {layer(4)}));
}

// The built-in model's layout: W then b per layer, tiling the stage; a
// library's stage is one tensor.
TEST(VerifyMetric, ModelLayouts) {
  const ModelShape shape{2, 8, 3, 1};
  Model builtin(shape);
  const std::vector<ParamTensor> layout = builtin.paramLayout(1);
  ASSERT_EQ(layout.size(), 6u);
  EXPECT_EQ(describe(layout[0]), "layer 0 weight");
  EXPECT_EQ(layout[0].size, 64);
  EXPECT_EQ(describe(layout[5]), "layer 2 bias");
  EXPECT_EQ(layout[5].offset + layout[5].size, builtin.numParams(1));
  const std::vector<float> w(size_t(builtin.numParams(1)), 1.0f);
  EXPECT_NO_THROW(compareWeights({w}, {w}, {layout}));

  Model library(shape, PIPESCHED_MLP_PLUGIN);
  const std::vector<ParamTensor> whole = library.paramLayout(1);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].kind, ParamTensor::Kind::Whole);
  EXPECT_EQ(whole[0].size, library.numParams(1));
  EXPECT_EQ(describe(whole[0]), "all parameters (layout unknown)");
}

} // namespace
