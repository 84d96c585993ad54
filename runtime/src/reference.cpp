#include "reference.h"

#include <algorithm>

namespace pipesched::runtime {

ReferenceResult runReference(Model &model, const DataSpec &data,
                             const OptimizerConfig &optimizer, int steps) {
  const int S = model.shape().stages;
  const int64_t block = data.rows * data.hidden;
  ReferenceResult result;
  result.params.resize(S);
  std::vector<std::vector<float>> grads(S);
  std::vector<OptimizerState> states(S);
  for (int s = 0; s < S; ++s) {
    result.params[s].resize(size_t(model.numParams(s)));
    model.init(s, result.params[s].data());
    grads[s].assign(result.params[s].size(), 0.0f);
  }
  // acts[s] is stage s's input; acts[S] the model's output.
  std::vector<std::vector<float>> acts(S + 1, std::vector<float>(block));
  std::vector<float> grad(block), gradIn(block);

  for (int step = 0; step < steps; ++step) {
    double total = 0.0;
    for (int b = 0; b < data.microbatches; ++b) {
      makeInput(data, step, b, acts[0].data());
      for (int s = 0; s < S; ++s)
        model.forward(s, result.params[s].data(), data.rows, acts[s].data(),
                      acts[s + 1].data());
      total += lossAndGrad(data, step, b, acts[S].data(), grad.data());
      for (int s = S - 1; s >= 0; --s) {
        model.backward(s, result.params[s].data(), data.rows, acts[s].data(),
                       grad.data(), s > 0 ? gradIn.data() : nullptr,
                       grads[s].data());
        std::swap(grad, gradIn);
      }
    }
    result.losses.push_back(total / double(data.microbatches));
    for (int s = 0; s < S; ++s) {
      applyOptimizer(optimizer, states[s], result.params[s].data(),
                     grads[s].data(), grads[s].size());
      std::fill(grads[s].begin(), grads[s].end(), 0.0f);
    }
  }
  return result;
}

} // namespace pipesched::runtime
