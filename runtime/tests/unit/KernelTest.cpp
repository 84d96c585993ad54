// The MLP's gradients against finite differences, the loss gradients, and
// the split backward's halves against the whole.
#include "model/data.h"
#include "model/kernels.h"
#include "model/model.h"
#include "pipesched/runtime/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

using namespace pipesched::runtime;

namespace {

std::vector<float> randomVector(size_t n, uint64_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  uint64_t key = pipesched_rng_key(seed, 99, 0, 0);
  for (size_t k = 0; k < n; ++k)
    v[k] = pipesched_rng_uniform(key, k) * scale;
  return v;
}

// Central difference of f at x[k], in double around float evaluations.
double numericGrad(const std::function<double()> &f, float &x, float h) {
  const float saved = x;
  x = saved + h;
  double up = f();
  x = saved - h;
  double down = f();
  x = saved;
  return (up - down) / (2.0 * double(h));
}

void expectClose(double got, double want, double tol, const std::string &what) {
  EXPECT_NEAR(got, want, tol * std::max(1.0, std::fabs(want))) << what;
}

TEST(Kernels, GeluDerivative) {
  std::vector<float> z = {-3.0f, -1.0f, -0.2f, 0.0f, 0.3f, 1.5f, 4.0f};
  std::vector<float> ones(z.size(), 1.0f), dz(z.size());
  kernels::geluBackward(z.data(), ones.data(), dz.data(), int64_t(z.size()));
  for (size_t k = 0; k < z.size(); ++k) {
    auto gelu = [&] {
      float a;
      kernels::geluForward(&z[k], &a, 1);
      return double(a);
    };
    expectClose(dz[k], numericGrad(gelu, z[k], 1e-2f), 1e-3, "z=" + std::to_string(z[k]));
  }
  float a0, zero = 0.0f;
  kernels::geluForward(&zero, &a0, 1);
  EXPECT_EQ(a0, 0.0f);
}

// d/dtheta of sum(y * c) for y = stage(x): backward with grad_output = c.
TEST(Kernels, StageGradientsMatchFiniteDifferences) {
  ModelShape shape{2, 6, 2, 7}; // 2 stages, H = 6, 2 layers, seed 7
  Model model(shape);
  const int64_t rows = 3, H = shape.hidden;
  const int stage = 1;
  std::vector<float> params(size_t(model.numParams(stage)));
  model.init(stage, params.data());
  // Non-zero biases, so that their gradients are exercised away from 0.
  for (size_t k = 0; k < params.size(); ++k)
    params[k] += 0.05f * pipesched_rng_uniform(3, k);
  std::vector<float> x = randomVector(size_t(rows * H), 1);
  std::vector<float> c = randomVector(size_t(rows * H), 2);
  std::vector<float> y(x.size());
  auto objective = [&] {
    model.forward(stage, params.data(), rows, x.data(), y.data());
    double s = 0;
    for (size_t k = 0; k < y.size(); ++k)
      s += double(y[k]) * c[k];
    return s;
  };
  std::vector<float> gx(x.size()), gp(params.size(), 0.0f);
  model.backward(stage, params.data(), rows, x.data(), c.data(), gx.data(), gp.data());
  for (size_t k = 0; k < x.size(); ++k)
    expectClose(gx[k], numericGrad(objective, x[k], 1e-2f), 2e-3, "input " + std::to_string(k));
  for (size_t k = 0; k < params.size(); ++k)
    expectClose(gp[k], numericGrad(objective, params[k], 1e-2f), 2e-3,
                "param " + std::to_string(k));
}

TEST(Kernels, SplitBackwardHalvesEqualTheWhole) {
  ModelShape shape{1, 8, 3, 1};
  Model model(shape);
  const int64_t rows = 4;
  std::vector<float> params(size_t(model.numParams(0)));
  model.init(0, params.data());
  std::vector<float> x = randomVector(size_t(rows * 8), 5), g = randomVector(size_t(rows * 8), 6);
  std::vector<float> gx1(x.size()), gx2(x.size());
  std::vector<float> gp1(params.size(), 0.0f), gp2(params.size(), 0.0f);
  model.backward(0, params.data(), rows, x.data(), g.data(), gx1.data(), gp1.data());
  model.backward(0, params.data(), rows, x.data(), g.data(), gx2.data(), nullptr);
  model.backward(0, params.data(), rows, x.data(), g.data(), nullptr, gp2.data());
  EXPECT_EQ(gx1, gx2);
  EXPECT_EQ(gp1, gp2);
}

TEST(Kernels, BackwardAccumulates) {
  ModelShape shape{1, 4, 1, 1};
  Model model(shape);
  std::vector<float> params(size_t(model.numParams(0)));
  model.init(0, params.data());
  std::vector<float> x = randomVector(8, 5), g = randomVector(8, 6);
  std::vector<float> once(params.size(), 0.0f), twice(params.size(), 0.0f);
  model.backward(0, params.data(), 2, x.data(), g.data(), nullptr, once.data());
  model.backward(0, params.data(), 2, x.data(), g.data(), nullptr, twice.data());
  model.backward(0, params.data(), 2, x.data(), g.data(), nullptr, twice.data());
  for (size_t k = 0; k < once.size(); ++k)
    EXPECT_EQ(twice[k], once[k] + once[k]);
}

void checkLossGradient(LossKind kind) {
  DataSpec d;
  d.rows = 3;
  d.hidden = 5;
  d.microbatches = 4;
  d.loss = kind;
  std::vector<float> y = randomVector(15, 11, 2.0f), grad(15);
  lossAndGrad(d, 2, 1, y.data(), grad.data());
  auto loss = [&] { return lossAndGrad(d, 2, 1, y.data(), nullptr); };
  for (size_t k = 0; k < y.size(); ++k)
    // grad is d(loss_b / B)/dy.
    expectClose(double(grad[k]) * d.microbatches, numericGrad(loss, y[k], 1e-2f), 2e-3,
                "y " + std::to_string(k));
}

TEST(Kernels, MseGradient) { checkLossGradient(LossKind::Mse); }
TEST(Kernels, CrossEntropyGradient) { checkLossGradient(LossKind::CrossEntropy); }

TEST(Kernels, MseValue) {
  DataSpec d;
  d.rows = 1;
  d.hidden = 2;
  d.seed = 3;
  std::vector<float> t(2);
  // The target is the teacher x / 2 of the microbatch's input.
  uint64_t key = pipesched_rng_key(3, PIPESCHED_RNG_INPUT, 0, 0);
  t[0] = 0.5f * pipesched_rng_uniform(key, 0) + 1.0f;
  t[1] = 0.5f * pipesched_rng_uniform(key, 1) - 2.0f;
  // ((1)^2 / 2 + (2)^2 / 2) / 2
  EXPECT_NEAR(lossAndGrad(d, 0, 0, t.data(), nullptr), 1.25, 1e-6);
}

TEST(Kernels, CrossEntropyTargetIsTheLargestInput) {
  DataSpec d;
  d.rows = 1;
  d.hidden = 4;
  d.seed = 5;
  d.loss = LossKind::CrossEntropy;
  std::vector<float> x(4), grad(4);
  makeInput(d, 0, 0, x.data());
  int64_t target = std::max_element(x.begin(), x.end()) - x.begin();
  std::vector<float> y(4, 0.0f);
  lossAndGrad(d, 0, 0, y.data(), grad.data());
  // Uniform logits: the gradient is (1/4 - 1) at the target, 1/4 elsewhere.
  for (int64_t k = 0; k < 4; ++k)
    EXPECT_EQ(grad[k] < 0, k == target) << "class " << k;
}

TEST(Kernels, InputsAreKeyedByStepAndMicrobatch) {
  DataSpec d;
  d.rows = 2;
  d.hidden = 3;
  std::vector<float> a(6), b(6), c(6);
  makeInput(d, 0, 1, a.data());
  makeInput(d, 0, 1, b.data());
  makeInput(d, 1, 1, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}

} // namespace
