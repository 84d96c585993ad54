// Stage graphs: predecessors and successors in edge order, and the
// reference's back-propagation over a DAG (fan-in inputs summed, fan-out
// gradients summed, every sink's loss) against finite differences.
#include "program/stage_graph.h"
#include "verify/reference.h"

#include "pipesched/runtime/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace pipesched::runtime;

namespace {

std::vector<int> list(StageList l) { return std::vector<int>(l.begin(), l.end()); }

TEST(StageGraph, KeepsTheEdgeOrder) {
  // A 6-stage chain with a skip from 1 to 4, the skip listed between.
  StageGraph g(6, {{0, 1}, {1, 2}, {1, 4}, {2, 3}, {3, 4}, {4, 5}});
  EXPECT_EQ(list(g.successors(1)), (std::vector<int>{2, 4}));
  EXPECT_EQ(list(g.predecessors(4)), (std::vector<int>{1, 3}));
  EXPECT_EQ(list(g.predecessors(0)), std::vector<int>{});
  EXPECT_EQ(g.sinks(), 1);
  EXPECT_TRUE(g.isSink(5));
  StageGraph reversed(6, {{3, 4}, {1, 4}, {0, 1}, {1, 2}, {2, 3}, {4, 5}});
  EXPECT_EQ(list(reversed.predecessors(4)), (std::vector<int>{3, 1}));
}

TEST(StageGraph, ChainAndIndependentStages) {
  StageGraph chain = StageGraph::chain(3);
  EXPECT_EQ(chain.edges(), (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
  EXPECT_EQ(chain.sinks(), 1);
  StageGraph none(3, {});
  EXPECT_EQ(none.sinks(), 3);
  EXPECT_TRUE(none.predecessors(2).empty());
}

// d loss / d theta of one reference step against central differences of the
// loss it reports. A wrong fan-in or fan-out (a missing successor's
// gradient, a sink's loss left out) is off by the size of a gradient.
void checkGradients(const StageGraph &graph, const std::string &name) {
  ModelShape shape{graph.stages(), 4, 1, 3};
  Model model(shape);
  DataSpec data;
  data.seed = 5;
  data.rows = 2;
  data.hidden = 4;
  data.microbatches = 2;
  std::vector<std::vector<float>> params(size_t(graph.stages())), grads(params.size());
  for (int s = 0; s < graph.stages(); ++s) {
    params[size_t(s)].resize(size_t(model.numParams(s)));
    model.init(s, params[size_t(s)].data());
    for (size_t k = 0; k < params[size_t(s)].size(); ++k) // non-zero biases
      params[size_t(s)][k] += 0.1f * pipesched_rng_uniform(uint64_t(s) + 11, k);
    grads[size_t(s)].assign(params[size_t(s)].size(), 0.0f);
  }
  referenceStep(model, graph, data, 0, params, grads);
  std::vector<std::vector<float>> scratch = grads;
  auto loss = [&] { return referenceStep(model, graph, data, 0, params, scratch); };
  double largest = 0;
  for (const std::vector<float> &g : grads)
    for (float x : g)
      largest = std::max(largest, std::fabs(double(x)));
  ASSERT_GT(largest, 1e-3) << name;
  for (int s = 0; s < graph.stages(); ++s)
    for (size_t k = 0; k < params[size_t(s)].size(); ++k) {
      float &x = params[size_t(s)][k];
      const float saved = x, h = 1e-2f;
      x = saved + h;
      const double up = loss();
      x = saved - h;
      const double down = loss();
      x = saved;
      const double numeric = (up - down) / (2.0 * double(h));
      EXPECT_NEAR(grads[size_t(s)][k], numeric, 2e-3 * largest)
          << name << ": stage " << s << ", parameter " << k;
    }
}

TEST(Reference, DagGradientsMatchFiniteDifferences) {
  checkGradients(StageGraph::chain(3), "chain");
  checkGradients(StageGraph(3, {{0, 2}, {1, 2}}), "two encoders and a decoder");
  checkGradients(StageGraph(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 4}, {4, 5}}),
                 "skip from 1 to 4");
  checkGradients(StageGraph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}), "diamond");
  checkGradients(StageGraph(2, {}), "independent stages");
  checkGradients(StageGraph(3, {{0, 1}, {0, 2}}), "two sinks");
}

// Independent stages are separate models: each trains on its own loss, and
// the step's loss is the sum of theirs.
TEST(Reference, IndependentStagesSumTheirLosses) {
  DataSpec data;
  data.rows = 2;
  data.hidden = 8;
  data.microbatches = 3;
  ModelShape two{2, 8, 1, 1};
  Model model(two);
  ReferenceResult both = runReference(model, StageGraph(2, {}), data, OptimizerConfig{}, 2);
  ReferenceResult chain = runReference(model, StageGraph::chain(2), data, OptimizerConfig{}, 2);
  EXPECT_NE(both.losses, chain.losses);
  // Stage 0 alone, as a one-stage model, trains to the same weights.
  ModelShape one{1, 8, 1, 1};
  Model single(one);
  ReferenceResult alone = runReference(single, StageGraph::chain(1), data, OptimizerConfig{}, 2);
  EXPECT_EQ(both.params[0], alone.params[0]);
  EXPECT_GT(both.losses[0], alone.losses[0]);
}

} // namespace
