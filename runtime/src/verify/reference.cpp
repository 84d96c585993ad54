#include "verify/reference.h"

#include "model/kernels.h"

#include <algorithm>

namespace pipesched::runtime {

double referenceStep(Model &model, const StageGraph &graph, const DataSpec &data,
                     int step, const std::vector<std::vector<float>> &params,
                     std::vector<std::vector<float>> &grads,
                     const std::function<void()> &progress) {
  const int S = graph.stages();
  const size_t block = size_t(data.rows * data.hidden);
  // Per stage: its output, its input gradient, and the scratch where a
  // fan-in input is summed.
  std::vector<std::vector<float>> out(static_cast<size_t>(S), std::vector<float>(block));
  std::vector<std::vector<float>> gradIn(out), inSum(out);
  std::vector<float> x(block), gradSum(block), lossGrad(block);

  // acc = t0; acc += t1; ... over the listed stages (one: that tensor).
  auto sum = [&](StageList stages, std::vector<std::vector<float>> &of,
                 std::vector<float> &acc) -> const float * {
    if (stages.size() == 1)
      return of[size_t(stages[0])].data();
    acc = of[size_t(stages[0])];
    for (size_t k = 1; k < stages.size(); ++k)
      kernels::add(acc.data(), of[size_t(stages[k])].data(), int64_t(block));
    return acc.data();
  };
  auto input = [&](int s) -> const float * {
    StageList preds = graph.predecessors(s);
    return preds.empty() ? x.data() : sum(preds, out, inSum[size_t(s)]);
  };

  double total = 0.0;
  for (int b = 0; b < data.microbatches; ++b) {
    makeInput(data, step, b, x.data());
    for (int s = 0; s < S; ++s) {
      model.forward(s, params[size_t(s)].data(), data.rows, input(s), out[size_t(s)].data());
      if (graph.isSink(s))
        total += lossAndGrad(data, step, b, out[size_t(s)].data(), nullptr);
    }
    // Reverse stage order: every successor (a higher stage) is done first.
    for (int s = S - 1; s >= 0; --s) {
      const float *gradOut;
      if (graph.isSink(s)) {
        lossAndGrad(data, step, b, out[size_t(s)].data(), lossGrad.data());
        gradOut = lossGrad.data();
      } else {
        gradOut = sum(graph.successors(s), gradIn, gradSum);
      }
      const bool hasInput = !graph.predecessors(s).empty();
      model.backward(s, params[size_t(s)].data(), data.rows, input(s), gradOut,
                     hasInput ? gradIn[size_t(s)].data() : nullptr, grads[size_t(s)].data());
    }
    if (progress)
      progress();
  }
  return total / double(data.microbatches);
}

ReferenceResult runReference(Model &model, const StageGraph &graph, const DataSpec &data,
                             const OptimizerConfig &optimizer, int steps,
                             const std::function<void()> &progress, const Ties &ties) {
  const int S = model.shape().stages;
  ReferenceResult result;
  result.params.resize(static_cast<size_t>(S));
  std::vector<std::vector<float>> grads(static_cast<size_t>(S));
  std::vector<OptimizerState> states(static_cast<size_t>(S));
  const std::vector<int> tieOf = tieOfStages(S, ties);
  for (int s = 0; s < S; ++s) {
    result.params[size_t(s)].resize(size_t(model.numParams(s)));
    initTiedParams(model, ties, tieOf, s, result.params[size_t(s)].data());
    grads[size_t(s)].assign(result.params[size_t(s)].size(), 0.0f);
  }
  for (int step = 0; step < steps; ++step) {
    result.losses.push_back(referenceStep(model, graph, data, step, result.params, grads,
                                           progress));
    sumTiedGradients(model, ties, grads);
    for (int s = 0; s < S; ++s) {
      applyOptimizer(optimizer, states[size_t(s)], result.params[size_t(s)].data(),
                     grads[size_t(s)].data(), grads[size_t(s)].size());
      std::fill(grads[size_t(s)].begin(), grads[size_t(s)].end(), 0.0f);
    }
    shareTiedParams(model, ties, result.params);
  }
  return result;
}

} // namespace pipesched::runtime
