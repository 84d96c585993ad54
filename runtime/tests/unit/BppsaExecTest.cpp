// BPPSA on the CPU (runtime/src/model/bppsa_exec.cpp): the scan graph of the
// compiler's algorithm layer, executed on the built-in MLP, gives every
// stage's output gradient and weight gradient of sequential
// back-propagation, to float rounding of the reassociated products.
#include "model/bppsa_exec.h"
#include "model/mlp_stage.h"
#include "verify/verify_metric.h"

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

Chain makeChain(int64_t S, int64_t H, int64_t rows, int64_t layers, uint64_t seed,
                Activation act = Activation::Gelu) {
  const pipesched_stage_api *api = builtinMlpApi(act);
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

// J^T v equals the stage backward's input gradient, dense and CSR, GELU
// and ReLU; the CSR matrix equals the dense one, and with ReLU it is
// sparse (the inactive units' columns are zero).
TEST(BppsaExec, JacobianMatchesBackward) {
  for (Activation act : {Activation::Gelu, Activation::Relu})
    for (bppsa::Storage storage : {bppsa::Storage::Dense, bppsa::Storage::Csr})
      for (int64_t layers : {1, 2, 3}) {
        SCOPED_TRACE(std::string(bppsa::storageName(storage)) + " layers " +
                     std::to_string(layers) + (act == Activation::Relu ? " relu" : " gelu"));
        const int64_t H = 8, rows = 3;
        Chain c = makeChain(1, H, rows, layers, 7, act);
        c.config.stage = 0;
        std::vector<float> jac(size_t(
            bppsa::tensorFloats(bppsa::Value::Jacobian, storage, rows, H)));
        bppsa::writeJacobian(c.config, act, c.params[0].data(), rows, c.inputs[0].data(),
                             storage, jac.data());
        std::vector<float> got(size_t(rows * H));
        bppsa::combine(bppsa::Value::Vector, c.lossGradient.data(), jac.data(), storage,
                       rows, H, got.data());
        const pipesched_stage_api *api = builtinMlpApi(act);
        std::vector<float> want(got.size()), gp(c.params[0].size()),
            ws(size_t(api->workspace_floats(&c.config, rows)));
        api->backward(&c.config, c.params[0].data(), rows, c.inputs[0].data(),
                      c.lossGradient.data(), want.data(), gp.data(), ws.data());
        EXPECT_LT(normwiseRelativeError(got.data(), want.data(), want.size()), 1e-6);
        std::vector<float> dense(size_t(rows * H * H));
        bppsa::writeJacobian(c.config, act, c.params[0].data(), rows, c.inputs[0].data(),
                             bppsa::Storage::Dense, dense.data());
        EXPECT_EQ(bppsa::toDense(jac.data(), storage, rows, H), dense);
        if (storage == bppsa::Storage::Csr && act == Activation::Relu) {
          EXPECT_LT(bppsa::nonzeros(jac.data(), storage, rows, H), rows * H * H);
        }
      }
}

// A JJ product in CSR equals the dense one bit for bit (sums in double, k
// ascending, zeros skipped), and a ReLU chain's products stay sparse.
TEST(BppsaExec, CsrProductsEqualDense) {
  const int64_t H = 16, rows = 4;
  Chain c = makeChain(3, H, rows, 1, 11, Activation::Relu);
  std::vector<std::vector<float>> jac[2];
  for (int k = 0; k < 2; ++k) {
    bppsa::Storage storage = k ? bppsa::Storage::Csr : bppsa::Storage::Dense;
    for (int s = 1; s <= 2; ++s) {
      c.config.stage = s;
      jac[k].emplace_back(size_t(bppsa::tensorFloats(bppsa::Value::Jacobian, storage, rows, H)));
      bppsa::writeJacobian(c.config, Activation::Relu, c.params[size_t(s)].data(), rows,
                           c.inputs[size_t(s)].data(), storage, jac[k].back().data());
    }
    jac[k].emplace_back(jac[k][0].size());
    bppsa::combine(bppsa::Value::Jacobian, jac[k][1].data(), jac[k][0].data(), storage, rows,
                   H, jac[k][2].data());
  }
  EXPECT_EQ(bppsa::toDense(jac[1][2].data(), bppsa::Storage::Csr, rows, H), jac[0][2]);
  const int64_t nnz = bppsa::nonzeros(jac[1][2].data(), bppsa::Storage::Csr, rows, H);
  EXPECT_GT(nnz, 0);
  EXPECT_LT(nnz, rows * H * H);
  std::printf("ReLU, H = %lld, rows = %lld: J2 J1 holds %lld of %lld entries (%.2f)\n",
              (long long)H, (long long)rows, (long long)nnz, (long long)(rows * H * H),
              double(nnz) / double(rows * H * H));
}

// The scan's gradients equal back-propagation's, dense and CSR, GELU and
// ReLU, to float rounding of the reassociated products (accumulated in
// double). Measured worst normwise errors over these cases: GELU 2.0e-6,
// ReLU 4.9e-5 (S = 16: through 16 ReLU layers the gradient is much smaller
// than the products that make it, so the same rounding is a larger part of
// it). Bounds: 1e-5 (--verify's default tolerance) and 1e-4. The trained
// weights (--verify) see lr times these gradients added to O(1) weights.
TEST(BppsaExec, EqualsSequentialBackprop) {
  for (Activation act : {Activation::Gelu, Activation::Relu}) {
    const double bound = act == Activation::Relu ? 1e-4 : 1e-5;
    double overall = 0;
    for (bppsa::Storage storage : {bppsa::Storage::Dense, bppsa::Storage::Csr})
      for (int64_t S : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16})
        for (int64_t H : {4, 8, 16})
          for (int64_t rows : {1, 3})
            for (int64_t layers : {1, 2}) {
              SCOPED_TRACE("S=" + std::to_string(S) + " H=" + std::to_string(H) +
                           " rows=" + std::to_string(rows) +
                           " layers=" + std::to_string(layers) + " " +
                           std::string(bppsa::storageName(storage)) +
                           (act == Activation::Relu ? " relu" : " gelu"));
              Chain c = makeChain(S, H, rows, layers,
                                  uint64_t(S * 131 + H * 7 + rows + layers), act);
              BppsaShape shape = shapeOf(S, H, rows, layers);
              ASSERT_EQ(checkBppsa(shape), "");
              BppsaGraph graph = buildBppsaScan(shape);
              BppsaBackward b = runBppsa(shape, graph, c.config, act, storage, c.params,
                                         c.inputs, c.lossGradient);
              const double g = worst(b.outputGradients, c.outputGradients);
              const double w = worst(b.weightGradients, c.weightGradients);
              EXPECT_LT(g, bound);
              EXPECT_LT(w, bound);
              keepWorse(g, overall);
              keepWorse(w, overall);
            }
    std::printf("BPPSA vs back-propagation (%s): worst normwise error %.2e\n",
                act == Activation::Relu ? "ReLU" : "GELU", overall);
  }
}

// The operator does not commute: a product with its operands swapped gives
// other gradients, so the test above can fail.
TEST(BppsaExec, SwappedOperandsAreWrong) {
  const int64_t S = 8, H = 8;
  for (bppsa::Storage storage : {bppsa::Storage::Dense, bppsa::Storage::Csr}) {
    Chain c = makeChain(S, H, 1, 1, 3);
    BppsaShape shape = shapeOf(S, H, 1, 1);
    BppsaGraph graph = buildBppsaScan(shape);
    auto jj = std::find_if(graph.jobs.begin(), graph.jobs.end(),
                           [](const BppsaJob &j) { return j.product == Product::JJ; });
    ASSERT_NE(jj, graph.jobs.end());
    std::swap(jj->inputs[0], jj->inputs[1]);
    BppsaBackward b = runBppsa(shape, graph, c.config, Activation::Gelu, storage, c.params,
                               c.inputs, c.lossGradient);
    EXPECT_GT(worst(b.weightGradients, c.weightGradients), 1e-2);
  }
}

TEST(BppsaExec, StorageNames) {
  EXPECT_EQ(bppsa::storageNamed("dense"), bppsa::Storage::Dense);
  EXPECT_EQ(bppsa::storageNamed("csr"), bppsa::Storage::Csr);
  EXPECT_EQ(bppsa::storageNamed("CSR"), std::nullopt);
  // A receiver's buffer is sized before the data: dense worst case plus
  // indices for CSR.
  EXPECT_EQ(bppsa::tensorFloats(bppsa::Value::Jacobian, bppsa::Storage::Csr, 3, 4),
            3 * (2 + 4 + 2 * 16));
  EXPECT_EQ(bppsa::tensorFloats(bppsa::Value::Vector, bppsa::Storage::Csr, 3, 4), 12);
}
