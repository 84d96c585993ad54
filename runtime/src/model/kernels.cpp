#include "model/kernels.h"

#include <cmath>

namespace pipesched::runtime::kernels {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
} // namespace

void linearForward(const float *x, const float *w, const float *b, float *y,
                   int64_t rows, int64_t in, int64_t out) {
  // Blocks of 8 rows: 8 independent sums the CPU overlaps (one chain would
  // wait on each add's latency). Each sum still adds i = 0, 1, ... in order.
  constexpr int64_t kRows = 8;
  int64_t r0 = 0;
  for (; r0 + kRows <= rows; r0 += kRows) {
    const float *xr = x + r0 * in;
    for (int64_t o = 0; o < out; ++o) {
      const float *wo = w + o * in;
      float acc[kRows] = {};
      for (int64_t i = 0; i < in; ++i) {
        const float wi = wo[i];
        for (int64_t k = 0; k < kRows; ++k)
          acc[k] += xr[k * in + i] * wi;
      }
      for (int64_t k = 0; k < kRows; ++k)
        y[(r0 + k) * out + o] = acc[k] + b[o];
    }
  }
  for (int64_t r = r0; r < rows; ++r) {
    const float *xr = x + r * in;
    for (int64_t o = 0; o < out; ++o) {
      const float *wo = w + o * in;
      float acc = 0.0f;
      for (int64_t i = 0; i < in; ++i)
        acc += xr[i] * wo[i];
      y[r * out + o] = acc + b[o];
    }
  }
}

void linearBackwardInput(const float *dy, const float *w, float *dx,
                         int64_t rows, int64_t in, int64_t out) {
  for (int64_t r = 0; r < rows; ++r) {
    float *dxr = dx + r * in;
    for (int64_t i = 0; i < in; ++i)
      dxr[i] = 0.0f;
    for (int64_t o = 0; o < out; ++o) {
      const float d = dy[r * out + o];
      const float *wo = w + o * in;
      for (int64_t i = 0; i < in; ++i) // element-wise: vectorizes, same order
        dxr[i] += d * wo[i];
    }
  }
}

void linearBackwardWeight(const float *x, const float *dy, float *dw, float *db,
                          int64_t rows, int64_t in, int64_t out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * in;
    for (int64_t o = 0; o < out; ++o) {
      const float d = dy[r * out + o];
      float *dwo = dw + o * in;
      for (int64_t i = 0; i < in; ++i)
        dwo[i] += d * xr[i];
      db[o] += d;
    }
  }
}

void geluForward(const float *z, float *a, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float x = z[k];
    const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
    a[k] = 0.5f * x * (1.0f + std::tanh(u));
  }
}

void geluBackward(const float *z, const float *da, float *dz, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float x = z[k];
    const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
    const float t = std::tanh(u);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    dz[k] = da[k] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
  }
}

void reluForward(const float *z, float *a, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    a[k] = z[k] > 0.0f ? z[k] : 0.0f;
}

void reluBackward(const float *z, const float *da, float *dz, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    dz[k] = z[k] > 0.0f ? da[k] : 0.0f;
}

void add(float *acc, const float *x, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    acc[k] = acc[k] + x[k];
}

} // namespace pipesched::runtime::kernels
