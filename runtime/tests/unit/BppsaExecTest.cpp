// BPPSA on the CPU (runtime/src/bppsa_exec.cpp): the scan graph of the
// compiler's algorithm layer, executed on the built-in MLP, gives every
// stage's output gradient and weight gradient of sequential
// back-propagation, to float rounding of the reassociated products.
#include "bppsa_exec.h"
#include "mlp_stage.h"
#include "verify_metric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace pipesched::runtime;
using namespace pipesched::scheduling;

namespace {

struct Chain {
  pipesched_stage_config config{};
  std::vector<std::vector<float>> params, inputs;
  std::vector<float> lossGradient;
  // Sequential back-propagation: g_s and each stage's weight gradient.
  std::vector<std::vector<float>> outputGradients, weightGradients;
};

Chain makeChain(int64_t S, int64_t H, int64_t rows, int64_t layers, uint64_t seed) {
  const pipesched_stage_api *api = builtinMlpApi();
  Chain c;
  c.config = {PIPESCHED_STAGE_ABI_VERSION, 0, int32_t(S), H, layers, seed};
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows * H)), ws;
  for (float &v : x)
    v = normal(rng);
  for (int64_t s = 0; s < S; ++s) {
    c.config.stage = int32_t(s);
    std::vector<float> p(size_t(api->num_params(&c.config)));
    api->init(&c.config, p.data());
    // Non-zero biases too, so their gradients are exercised.
    for (float &v : p)
      v += 0.05f * normal(rng);
    c.params.push_back(p);
    c.inputs.push_back(x);
    ws.resize(size_t(api->workspace_floats(&c.config, rows)));
    std::vector<float> y(x.size());
    api->forward(&c.config, p.data(), rows, x.data(), y.data(), ws.data());
    x = y;
  }
  c.lossGradient.resize(x.size());
  for (float &v : c.lossGradient)
    v = normal(rng);
  c.outputGradients.assign(size_t(S), {});
  c.weightGradients.assign(size_t(S), {});
  std::vector<float> g = c.lossGradient;
  for (int64_t s = S - 1; s >= 0; --s) {
    c.config.stage = int32_t(s);
    c.outputGradients[size_t(s)] = g;
    std::vector<float> &gp = c.weightGradients[size_t(s)];
    gp.assign(c.params[size_t(s)].size(), 0.0f);
    std::vector<float> gin(g.size());
    api->backward(&c.config, c.params[size_t(s)].data(), rows, c.inputs[size_t(s)].data(),
                  g.data(), gin.data(), gp.data(), ws.data());
    g = gin;
  }
  return c;
}

BppsaShape shapeOf(int64_t S, int64_t H, int64_t rows, int64_t layers) {
  BppsaShape s;
  s.stages = S;
  s.width = H;
  s.rows = rows;
  s.layers = layers;
  s.workers = 4;
  return s;
}

double worst(const std::vector<std::vector<float>> &got,
             const std::vector<std::vector<float>> &want) {
  double err = 0;
  for (size_t s = 0; s < want.size(); ++s) {
    EXPECT_EQ(got[s].size(), want[s].size()) << "stage " << s;
    keepWorse(normwiseRelativeError(got[s].data(), want[s].data(), want[s].size()), err);
  }
  return err;
}

} // namespace

// J^T v equals the stage backward's input gradient.
TEST(BppsaExec, JacobianMatchesBackward) {
  for (int64_t layers : {1, 2, 3}) {
    Chain c = makeChain(1, 8, 3, layers, 7);
    c.config.stage = 0;
    std::vector<float> jac = stageJacobian(c.config, c.params[0].data(), 3, c.inputs[0].data());
    std::vector<float> got(24);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t i = 0; i < 8; ++i) {
        double sum = 0;
        for (int64_t o = 0; o < 8; ++o)
          sum += double(jac[size_t(r * 64 + i * 8 + o)]) * c.lossGradient[size_t(r * 8 + o)];
        got[size_t(r * 8 + i)] = float(sum);
      }
    std::vector<float> want(24), gp(c.params[0].size()), ws(size_t(
        builtinMlpApi()->workspace_floats(&c.config, 3)));
    builtinMlpApi()->backward(&c.config, c.params[0].data(), 3, c.inputs[0].data(),
                              c.lossGradient.data(), want.data(), gp.data(), ws.data());
    EXPECT_LT(normwiseRelativeError(got.data(), want.data(), want.size()), 1e-6)
        << "layers " << layers;
  }
}

// The scan's gradients equal back-propagation's. Measured worst normwise
// error over these 120 cases: 2.0e-6 (float rounding of reassociated
// products, accumulated in double); the bound is 1e-5, --verify's default
// tolerance.
TEST(BppsaExec, EqualsSequentialBackprop) {
  double overall = 0;
  for (int64_t S : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16})
    for (int64_t H : {4, 8, 16})
      for (int64_t rows : {1, 3})
        for (int64_t layers : {1, 2}) {
          SCOPED_TRACE("S=" + std::to_string(S) + " H=" + std::to_string(H) +
                       " rows=" + std::to_string(rows) + " layers=" + std::to_string(layers));
          Chain c = makeChain(S, H, rows, layers, uint64_t(S * 131 + H * 7 + rows + layers));
          BppsaShape shape = shapeOf(S, H, rows, layers);
          ASSERT_EQ(checkBppsa(shape), "");
          BppsaGraph graph = buildBppsaScan(shape);
          BppsaBackward b = runBppsa(shape, graph, c.config, c.params, c.inputs, c.lossGradient);
          const double g = worst(b.outputGradients, c.outputGradients);
          const double w = worst(b.weightGradients, c.weightGradients);
          EXPECT_LT(g, 1e-5);
          EXPECT_LT(w, 1e-5);
          keepWorse(g, overall);
          keepWorse(w, overall);
        }
  RecordProperty("worst_normwise_error", std::to_string(overall));
  std::printf("BPPSA vs back-propagation: worst normwise error %.2e\n", overall);
}

// The operator does not commute: a product with its operands swapped gives
// other gradients, so the test above can fail.
TEST(BppsaExec, SwappedOperandsAreWrong) {
  const int64_t S = 8, H = 8;
  Chain c = makeChain(S, H, 1, 1, 3);
  BppsaShape shape = shapeOf(S, H, 1, 1);
  BppsaGraph graph = buildBppsaScan(shape);
  auto jj = std::find_if(graph.jobs.begin(), graph.jobs.end(),
                         [](const BppsaJob &j) { return j.product == Product::JJ; });
  ASSERT_NE(jj, graph.jobs.end());
  std::swap(jj->inputs[0], jj->inputs[1]);
  BppsaBackward b = runBppsa(shape, graph, c.config, c.params, c.inputs, c.lossGradient);
  EXPECT_GT(worst(b.weightGradients, c.weightGradients), 1e-2);
}

TEST(BppsaExec, RefusesSparseForNow) {
  Chain c = makeChain(2, 4, 1, 1, 1);
  BppsaShape shape = shapeOf(2, 4, 1, 1);
  shape.form = JacobianForm::Banded;
  shape.band = 3;
  BppsaGraph graph = buildBppsaScan(shape);
  EXPECT_THROW(runBppsa(shape, graph, c.config, c.params, c.inputs, c.lossGradient),
               std::invalid_argument);
}
