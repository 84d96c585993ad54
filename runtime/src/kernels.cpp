#include "kernels.h"

#include <cmath>

namespace pipesched::runtime::kernels {

namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
} // namespace

void linearForward(const float *x, const float *w, const float *b, float *y,
                   int64_t rows, int64_t in, int64_t out) {
  for (int64_t r = 0; r < rows; ++r) {
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

} // namespace pipesched::runtime::kernels
