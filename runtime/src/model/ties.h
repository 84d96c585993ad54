// Tied weights (docs/runtime.md, Tied weights): groups of stages that share
// one weight tensor, the program's `tied`. In the built-in MLP the tied
// tensor is the weight matrix (hidden x hidden, not the bias) of the first
// Linear layer of a group's lowest stage and of the last Linear layer of
// each of its other stages: the input embedding of the first stage and the
// output head of the last (Megatron's embedding group). Every copy starts
// from the lowest stage's initial matrix and applies the same update with
// the summed gradient, so the copies stay one parameter.
#pragma once
#include "model/model.h"
#include "model/param_layout.h"
#include <vector>

namespace pipesched::runtime {

using Ties = std::vector<std::vector<int>>;

// Where the tied tensor of `stage` (a member of `group`) lies in the stage's
// parameters. Throws std::runtime_error for a model whose layout is unknown
// (a model library).
ParamTensor tiedTensor(const Model &model, const std::vector<int> &group, int stage);

// Initializes stage `stage`'s parameters (model.init), then, if the stage is
// tied, its tied tensor from the initial matrix of its group's lowest stage.
void initTiedParams(const Model &model, const Ties &ties, const std::vector<int> &tieOf,
                    int stage, float *params);

// Per stage, its group in `ties` (-1: none).
std::vector<int> tieOfStages(int stages, const Ties &ties);

// The reference holds a tied tensor once, in the group's lowest stage: its
// gradient is the sum of every stage's (in the group's order), the other
// stages' gradients of it are cleared (their optimizer leaves it as it is),
// and after the optimizer step shareTiedParams copies it to the others,
// which read it as their own.
void sumTiedGradients(const Model &model, const Ties &ties,
                      std::vector<std::vector<float>> &grads);
void shareTiedParams(const Model &model, const Ties &ties,
                     std::vector<std::vector<float>> &params);

// Throws std::runtime_error when `model` cannot tie weights (its layout is
// unknown, or a stage has no weight matrix to tie).
void checkTiesSupported(const Model &model, const Ties &ties);

} // namespace pipesched::runtime
