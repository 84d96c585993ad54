// Training data and loss. Inputs and targets of (step, microbatch) come from
// the counter-based RNG (rng.h), so every rank generates them locally.
#pragma once

#include <cstdint>

namespace pipesched::runtime {

enum class LossKind { Mse, CrossEntropy };

struct DataSpec {
  uint64_t seed = 1;
  int64_t rows = 8;    // --batch: rows per microbatch
  int64_t hidden = 64; // features per row (and classes for cross-entropy)
  int microbatches = 1;
  LossKind loss = LossKind::Mse;
};

// x[rows x hidden], uniform in [-1, 1).
void makeInput(const DataSpec &d, int step, int microbatch, float *x);

// The loss of microbatch `microbatch` given the last stage's output y:
//   MSE: mean over rows x hidden of (y - t)^2 / 2, t = x / 2 (x: makeInput);
//   CE:  mean over rows of -log softmax(y_row)[class], class = the index of
//        the row's largest input.
// With grad != nullptr, also writes grad[rows x hidden] = dTotal/dy where
// Total = (1/B) sum_b loss_b, i.e. dloss_b/dy / B.
double lossAndGrad(const DataSpec &d, int step, int microbatch, const float *y,
                   float *grad);

// The targets lossAndGrad uses, for a backend that computes the loss
// elsewhere: MSE: t[rows x hidden]; cross-entropy: each row's class in
// t[0 .. rows) (exact in float: hidden <= 2^14).
void makeTargets(const DataSpec &d, int step, int microbatch, float *t);

} // namespace pipesched::runtime
