#include "model/data.h"

#include "model/data_gen.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pipesched::runtime {

using datagen::ceTarget;
using datagen::mseTarget;

// The targets are a fixed function of the inputs (a "teacher"), so that the
// model has something to learn and the loss falls from step to step: MSE
// regresses onto x / 2, cross-entropy classifies each row by the index of
// its largest input. The input is regenerated from its counter-based key,
// so the last stage needs no copy of it. Element by element in data_gen.h,
// which the CUDA backend's kernels share.
namespace {

uint64_t dataKey(const DataSpec &d, int step, int microbatch) {
  return datagen::key(d.seed, step, microbatch);
}

} // namespace

void makeInput(const DataSpec &d, int step, int microbatch, float *x) {
  const uint64_t key = dataKey(d, step, microbatch);
  for (int64_t k = 0; k < d.rows * d.hidden; ++k)
    x[k] = datagen::input(key, k);
}

void makeTargets(const DataSpec &d, int step, int microbatch, float *t) {
  const uint64_t key = dataKey(d, step, microbatch);
  if (d.loss == LossKind::Mse)
    for (int64_t k = 0; k < d.rows * d.hidden; ++k)
      t[k] = mseTarget(key, k);
  else
    for (int64_t r = 0; r < d.rows; ++r)
      t[r] = float(ceTarget(key, r, d.hidden));
}

double lossAndGrad(const DataSpec &d, int step, int microbatch, const float *y,
                   float *grad) {
  const int64_t R = d.rows, H = d.hidden;
  const uint64_t key = dataKey(d, step, microbatch);
  double loss = 0.0;
  if (d.loss == LossKind::Mse) {
    const float scale = 1.0f / (float(R * H) * float(d.microbatches));
    for (int64_t k = 0; k < R * H; ++k) {
      float diff = y[k] - mseTarget(key, k);
      loss += 0.5 * double(diff) * double(diff);
      if (grad)
        grad[k] = diff * scale;
    }
    return loss / double(R * H);
  }
  const float scale = 1.0f / (float(R) * float(d.microbatches));
  for (int64_t r = 0; r < R; ++r) {
    const float *row = y + r * H;
    const int64_t target = ceTarget(key, r, H);
    // Shifted by the row maximum so exp never overflows.
    float top = *std::max_element(row, row + H);
    double sum = 0.0;
    for (int64_t k = 0; k < H; ++k)
      sum += std::exp(double(row[k] - top));
    loss += std::log(sum) - double(row[target] - top);
    if (grad)
      for (int64_t k = 0; k < H; ++k) {
        float p = float(std::exp(double(row[k] - top)) / sum);
        grad[r * H + k] = (p - (k == target ? 1.0f : 0.0f)) * scale;
      }
  }
  return loss / double(R);
}

} // namespace pipesched::runtime
