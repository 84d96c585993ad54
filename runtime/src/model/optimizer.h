// SGD and Adam, element-wise in float32: replicas that apply the same update
// to the same numbers stay bitwise identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipesched::runtime {

enum class OptimizerKind { Sgd, Adam };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Sgd;
  float lr = 0.05f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

struct OptimizerState {
  std::vector<float> m, v; // Adam moments, allocated on first use
  int64_t t = 0;           // steps applied
};

// params -= update(grad); the caller zeroes grad afterwards.
void applyOptimizer(const OptimizerConfig &config, OptimizerState &state,
                    float *params, const float *grad, size_t n);

} // namespace pipesched::runtime
