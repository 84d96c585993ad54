#include "model/optimizer.h"

#include <cmath>

namespace pipesched::runtime {

void applyOptimizer(const OptimizerConfig &c, OptimizerState &state,
                    float *params, const float *grad, size_t n) {
  ++state.t;
  if (c.kind == OptimizerKind::Sgd) {
    for (size_t k = 0; k < n; ++k)
      params[k] -= c.lr * grad[k];
    return;
  }
  if (state.m.size() != n) {
    state.m.assign(n, 0.0f);
    state.v.assign(n, 0.0f);
  }
  const float correct1 = float(1.0 - std::pow(double(c.beta1), double(state.t)));
  const float correct2 = float(1.0 - std::pow(double(c.beta2), double(state.t)));
  for (size_t k = 0; k < n; ++k) {
    const float g = grad[k];
    state.m[k] = c.beta1 * state.m[k] + (1.0f - c.beta1) * g;
    state.v[k] = c.beta2 * state.v[k] + (1.0f - c.beta2) * g * g;
    const float mhat = state.m[k] / correct1;
    const float vhat = state.v[k] / correct2;
    params[k] -= c.lr * mhat / (std::sqrt(vhat) + c.eps);
  }
}

} // namespace pipesched::runtime
