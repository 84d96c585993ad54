// The single-process reference: plain sequential back-propagation of the same
// model, data and optimizer over the same stage graph, microbatch by
// microbatch (b = 0, 1, ...), accumulating weight gradients, one optimizer
// step per training step. Its sums follow the executor's orders: forwards in
// stage order, a stage's inputs summed in edge order; backwards in reverse
// stage order, the gradient of a fan-out stage the sum of its successors'
// input gradients in edge order; every sink's loss counted. With the chain
// there is nothing to sum, and the reference is the plain chain's.
#pragma once

#include "model/data.h"
#include "model/model.h"
#include "model/optimizer.h"
#include "model/ties.h"
#include "program/stage_graph.h"

#include <functional>
#include <vector>

namespace pipesched::runtime {

struct ReferenceResult {
  std::vector<double> losses;             // per step: (1/B) sum_b sum_sinks loss
  std::vector<std::vector<float>> params; // per stage, after the last step
};

// One training step without the optimizer: returns the step's loss
// ((1/B) sum_b sum_sinks loss_b) and adds each stage's weight gradient to
// grads[s]. graph.stages() must equal the model's stages.
// `progress`, if given, is called after every microbatch (pipeline-run's
// --verify keeps the other ranks' deadline alive with it).
double referenceStep(Model &model, const StageGraph &graph, const DataSpec &data,
                     int step, const std::vector<std::vector<float>> &params,
                     std::vector<std::vector<float>> &grads,
                     const std::function<void()> &progress = {});

// `steps` steps, each followed by the optimizer.
// With `ties` (groups of stages sharing one weight tensor, ties.h) the
// tensor is one parameter: its gradient the sum of all its uses.
ReferenceResult runReference(Model &model, const StageGraph &graph, const DataSpec &data,
                             const OptimizerConfig &optimizer, int steps,
                             const std::function<void()> &progress = {},
                             const Ties &ties = {});

} // namespace pipesched::runtime
