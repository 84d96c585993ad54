// makeTargets (data.h) hands a backend exactly what lossAndGrad compares with.
#include "model/data.h"

#include <gtest/gtest.h>

#include <vector>

using namespace pipesched::runtime;

namespace {

TEST(Targets, MseTargetsGiveZeroLoss) {
  DataSpec d;
  d.rows = 3;
  d.hidden = 5;
  std::vector<float> t(15);
  makeTargets(d, 1, 2, t.data());
  EXPECT_EQ(lossAndGrad(d, 1, 2, t.data(), nullptr), 0.0); // a perfect prediction
}

TEST(Targets, CrossEntropyClassIsWhereTheGradientIsNegative) {
  DataSpec d;
  d.rows = 3;
  d.hidden = 5;
  d.loss = LossKind::CrossEntropy;
  std::vector<float> t(3), y(15, 0.0f), grad(15);
  makeTargets(d, 1, 2, t.data());
  lossAndGrad(d, 1, 2, y.data(), grad.data()); // uniform logits
  for (int64_t r = 0; r < d.rows; ++r)
    for (int64_t k = 0; k < d.hidden; ++k)
      EXPECT_EQ(grad[r * 5 + k] < 0, k == int64_t(t[r])) << "row " << r << ", class " << k;
}

} // namespace
