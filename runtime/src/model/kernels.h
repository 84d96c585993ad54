// The MLP's float32 kernels. Each fixes its summation order (plain loops, no
// BLAS), so that the distributed run and the sequential reference produce
// bitwise-equal results whenever they add the same numbers in the same
// order. runtime/examples/mlp_plugin.c repeats them in C, in the same order.
#pragma once

#include <cstdint>

namespace pipesched::runtime::kernels {

// y[r][o] = (sum_i x[r][i] * w[o][i], i ascending) + b[o].
void linearForward(const float *x, const float *w, const float *b, float *y,
                   int64_t rows, int64_t in, int64_t out);

// dx[r][i] = sum_o dy[r][o] * w[o][i], o ascending from 0.
void linearBackwardInput(const float *dy, const float *w, float *dx,
                         int64_t rows, int64_t in, int64_t out);

// dw[o][i] += dy[r][o] * x[r][i] and db[o] += dy[r][o], r ascending.
void linearBackwardWeight(const float *x, const float *dy, float *dw, float *db,
                          int64_t rows, int64_t in, int64_t out);

// GELU, tanh approximation: a = 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
void geluForward(const float *z, float *a, int64_t n);

// dz = da * gelu'(z).
void geluBackward(const float *z, const float *da, float *dz, int64_t n);

// ReLU: a = max(z, 0); dz = da * relu'(z), with relu'(0) = 0.
void reluForward(const float *z, float *a, int64_t n);
void reluBackward(const float *z, const float *da, float *dz, int64_t n);

// acc[k] = acc[k] + x[k]: a fan-in sum of the stage graph, one term at a time.
void add(float *acc, const float *x, int64_t n);

} // namespace pipesched::runtime::kernels
