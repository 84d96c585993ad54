// The single-process reference: plain sequential back-propagation of the same
// model, data and optimizer, microbatch by microbatch (b = 0, 1, ...),
// accumulating weight gradients, one optimizer step per training step.
#pragma once

#include "data.h"
#include "model.h"
#include "optimizer.h"

#include <vector>

namespace pipesched::runtime {

struct ReferenceResult {
  std::vector<double> losses;             // per step: (1/B) sum_b loss_b
  std::vector<std::vector<float>> params; // per stage, after the last step
};

ReferenceResult runReference(Model &model, const DataSpec &data,
                             const OptimizerConfig &optimizer, int steps);

} // namespace pipesched::runtime
