// Tied weights (ties.h): where the shared tensor lies, that every copy
// starts equal, and that the reference's gradient of a shared parameter is
// the sum of its uses' (against finite differences of the loss, perturbing
// every copy at once), with the other copies left to follow.
#include "model/ties.h"
#include "verify/reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace pipesched::runtime;

namespace {

TEST(Ties, TheLowestStageTiesItsFirstLayerTheOthersTheirLast) {
  Model model(ModelShape{3, 4, 2, 1});
  // Per stage: layer 0 weight (16), bias (4), layer 1 weight, bias.
  const std::vector<int> group{2, 0};
  ParamTensor first = tiedTensor(model, group, 0), last = tiedTensor(model, group, 2);
  EXPECT_EQ(first.layer, 0);
  EXPECT_EQ(first.offset, 0);
  EXPECT_EQ(last.layer, 1);
  EXPECT_EQ(last.offset, 20);
  EXPECT_EQ(first.size, 16);
  EXPECT_EQ(last.size, 16);
}

TEST(Ties, EveryCopyStartsFromTheLowestStage) {
  Model model(ModelShape{4, 4, 1, 7});
  const Ties ties{{3, 0}};
  const std::vector<int> tieOf = tieOfStages(4, ties);
  std::vector<float> p0(size_t(model.numParams(0))), p3(p0.size()), own(p0.size());
  initTiedParams(model, ties, tieOf, 0, p0.data());
  initTiedParams(model, ties, tieOf, 3, p3.data());
  model.init(3, own.data());
  EXPECT_TRUE(std::equal(p0.begin(), p0.begin() + 16, p3.begin()));
  EXPECT_FALSE(std::equal(own.begin(), own.begin() + 16, p3.begin()));
  EXPECT_TRUE(std::equal(own.begin() + 16, own.end(), p3.begin() + 16)); // bias
}

TEST(Ties, TheSharedGradientIsTheSumOfTheUses) {
  const int S = 3;
  Model model(ModelShape{S, 4, 1, 3});
  const Ties ties{{0, 2}};
  const std::vector<int> tieOf = tieOfStages(S, ties);
  StageGraph graph = StageGraph::chain(S);
  DataSpec data;
  data.seed = 5;
  data.rows = 2;
  data.hidden = 4;
  data.microbatches = 2;
  std::vector<std::vector<float>> params(S), grads(S);
  for (int s = 0; s < S; ++s) {
    params[size_t(s)].resize(size_t(model.numParams(s)));
    initTiedParams(model, ties, tieOf, s, params[size_t(s)].data());
    grads[size_t(s)].assign(params[size_t(s)].size(), 0.0f);
  }
  referenceStep(model, graph, data, 0, params, grads);
  std::vector<std::vector<float>> scratch = grads;
  const std::vector<float> own2 = grads[2];
  sumTiedGradients(model, ties, grads);
  // The copy's gradient moved to the lowest stage; the others' is cleared.
  for (int k = 0; k < 16; ++k)
    EXPECT_EQ(grads[2][size_t(k)], 0.0f);
  double largest = 0;
  for (float x : grads[0])
    largest = std::max(largest, std::fabs(double(x)));
  ASSERT_GT(largest, 1e-3);
  auto loss = [&] { return referenceStep(model, graph, data, 0, params, scratch); };
  for (int k = 0; k < 16; ++k) {
    // One parameter: moving it moves both copies.
    float &a = params[0][size_t(k)], &b = params[2][size_t(k)];
    const float saved = a, h = 1e-2f;
    a = b = saved + h;
    const double up = loss();
    a = b = saved - h;
    const double down = loss();
    a = b = saved;
    const double numeric = (up - down) / (2.0 * double(h));
    EXPECT_NEAR(grads[0][size_t(k)], numeric, 2e-3 * largest) << "parameter " << k;
    // Not one use alone.
    EXPECT_NE(grads[0][size_t(k)], own2[size_t(k)]);
  }
}

TEST(Ties, TheReferenceKeepsTheCopiesEqual) {
  Model model(ModelShape{4, 8, 1, 1});
  DataSpec data;
  data.rows = 4;
  data.hidden = 8;
  data.microbatches = 3;
  OptimizerConfig adam;
  adam.kind = OptimizerKind::Adam;
  adam.lr = 0.01f;
  ReferenceResult r = runReference(model, StageGraph::chain(4), data, adam, 3, {}, {{0, 3}});
  EXPECT_TRUE(std::equal(r.params[0].begin(), r.params[0].begin() + 64, r.params[3].begin()));
  ReferenceResult untied = runReference(model, StageGraph::chain(4), data, adam, 3);
  EXPECT_NE(r.params[0], untied.params[0]);
}

} // namespace
