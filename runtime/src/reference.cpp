#include "reference.h"

#include "kernels.h"

#include <algorithm>

namespace pipesched::runtime {

ReferenceResult runReference(Model &model, const StageGraph &graph, const DataSpec &data,
                             const OptimizerConfig &optimizer, int steps) {
  const int S = model.shape().stages;
  const int64_t block = data.rows * data.hidden;
  ReferenceResult result;
  result.params.resize(size_t(S));
  std::vector<std::vector<float>> grads(static_cast<size_t>(S));
  std::vector<OptimizerState> states(static_cast<size_t>(S));
  for (int s = 0; s < S; ++s) {
    result.params[size_t(s)].resize(size_t(model.numParams(s)));
    model.init(s, result.params[size_t(s)].data());
    grads[size_t(s)].assign(result.params[size_t(s)].size(), 0.0f);
  }
  // Per stage: its output, its input gradient, and the scratch where a
  // fan-in input or a fan-out gradient is summed.
  auto blocks = [&] { return std::vector<std::vector<float>>(size_t(S), std::vector<float>(size_t(block))); };
  std::vector<std::vector<float>> out = blocks(), gradIn = blocks(), inSum = blocks();
  std::vector<float> data0(static_cast<size_t>(block)), gradSum(data0), lossGrad(data0);

  // acc = t0; acc += t1; ... over the listed stages (one: that tensor).
  auto sum = [&](StageList stages, std::vector<std::vector<float>> &of,
                 std::vector<float> &acc) -> const float * {
    if (stages.size() == 1)
      return of[size_t(stages[0])].data();
    acc = of[size_t(stages[0])];
    for (size_t k = 1; k < stages.size(); ++k)
      kernels::add(acc.data(), of[size_t(stages[k])].data(), block);
    return acc.data();
  };
  auto input = [&](int s) -> const float * {
    StageList preds = graph.predecessors(s);
    return preds.empty() ? data0.data() : sum(preds, out, inSum[size_t(s)]);
  };

  for (int step = 0; step < steps; ++step) {
    double total = 0.0;
    for (int b = 0; b < data.microbatches; ++b) {
      makeInput(data, step, b, data0.data());
      for (int s = 0; s < S; ++s) {
        model.forward(s, result.params[size_t(s)].data(), data.rows, input(s),
                      out[size_t(s)].data());
        if (graph.isSink(s))
          total += lossAndGrad(data, step, b, out[size_t(s)].data(), nullptr);
      }
      for (int s = S - 1; s >= 0; --s) {
        const float *gradOut;
        if (graph.isSink(s)) {
          lossAndGrad(data, step, b, out[size_t(s)].data(), lossGrad.data());
          gradOut = lossGrad.data();
        } else {
          gradOut = sum(graph.successors(s), gradIn, gradSum);
        }
        const bool hasInput = !graph.predecessors(s).empty();
        model.backward(s, result.params[size_t(s)].data(), data.rows, input(s), gradOut,
                       hasInput ? gradIn[size_t(s)].data() : nullptr,
                       grads[size_t(s)].data());
      }
    }
    result.losses.push_back(total / double(data.microbatches));
    for (int s = 0; s < S; ++s) {
      applyOptimizer(optimizer, states[size_t(s)], result.params[size_t(s)].data(),
                     grads[size_t(s)].data(), grads[size_t(s)].size());
      std::fill(grads[size_t(s)].begin(), grads[size_t(s)].end(), 0.0f);
    }
  }
  return result;
}

} // namespace pipesched::runtime
