// The optimizers against their published update rules, computed here
// independently in long double: the single-process reference trainer calls
// the same applyOptimizer as the runtime, so "equal to the reference"
// cannot catch a wrong rule. Adam is Kingma and Ba (ICLR 2015),
// Algorithm 1; the first steps, where bias correction dominates, come first.
#include "model/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace pipesched::runtime;

namespace {

/// A gradient that changes sign and scale from step to step and element to
/// element, so that m and v differ and no update is symmetric.
float gradientAt(int step, size_t k) {
  return float(std::sin(0.7 * step + 1.3 * double(k)) * (1.0 + 0.5 * double(k)));
}

/// One parameter's Adam trajectory by the paper's Algorithm 1.
struct AdamOracle {
  long double theta, m = 0, v = 0;
  int t = 0;
  void step(long double g, long double alpha, long double beta1,
            long double beta2, long double eps) {
    ++t;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    long double mHat = m / (1 - std::pow(beta1, (long double)t));
    long double vHat = v / (1 - std::pow(beta2, (long double)t));
    theta = theta - alpha * mHat / (std::sqrt(vHat) + eps);
  }
};

TEST(Optimizer, AdamFollowsKingmaAndBaStepByStep) {
  OptimizerConfig config;
  config.kind = OptimizerKind::Adam;
  config.lr = 0.01f;
  config.beta1 = 0.8f;  // not the defaults: a swapped beta shows
  config.beta2 = 0.95f;
  config.eps = 1e-6f;
  constexpr size_t n = 5;
  std::vector<float> params{0.5f, -1.0f, 2.0f, 0.0f, -0.25f};
  std::vector<AdamOracle> oracle;
  for (float p : params)
    oracle.push_back({p});
  OptimizerState state;
  for (int step = 1; step <= 12; ++step) {
    std::vector<float> grad(n);
    for (size_t k = 0; k < n; ++k)
      grad[k] = gradientAt(step, k);
    applyOptimizer(config, state, params.data(), grad.data(), n);
    for (size_t k = 0; k < n; ++k) {
      oracle[k].step(grad[k], config.lr, config.beta1, config.beta2,
                     config.eps);
      // float32 against long double: a few ulps of the update per step.
      EXPECT_NEAR(params[k], double(oracle[k].theta), 1e-6)
          << "step " << step << ", element " << k;
    }
  }
  EXPECT_EQ(state.t, 12);
}

TEST(Optimizer, AdamFirstStepMovesByLrTimesTheSign) {
  // Bias-corrected, the first update is lr * g / (|g| + eps): about lr in
  // the direction of -g whatever the betas (the paper's section 2.1).
  OptimizerConfig config;
  config.kind = OptimizerKind::Adam;
  config.lr = 0.1f;
  std::vector<float> params{1.0f, 1.0f}, grad{3.0f, -0.002f};
  OptimizerState state;
  applyOptimizer(config, state, params.data(), grad.data(), 2);
  EXPECT_NEAR(params[0], 0.9f, 1e-6);
  EXPECT_NEAR(params[1], 1.1f, 1e-5);
}

TEST(Optimizer, SgdIsThetaMinusLrTimesG) {
  OptimizerConfig config;
  config.lr = 0.25f;
  std::vector<float> params{1.0f, -2.0f, 0.5f};
  OptimizerState state;
  long double oracle[3] = {1.0L, -2.0L, 0.5L};
  for (int step = 1; step <= 4; ++step) {
    std::vector<float> grad(3);
    for (size_t k = 0; k < 3; ++k)
      grad[k] = gradientAt(step, k);
    applyOptimizer(config, state, params.data(), grad.data(), 3);
    for (size_t k = 0; k < 3; ++k) {
      oracle[k] -= (long double)config.lr * grad[k];
      EXPECT_NEAR(params[k], double(oracle[k]), 1e-6) << "step " << step;
    }
  }
}

} // namespace
