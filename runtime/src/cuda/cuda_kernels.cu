#include "cuda_kernels.h"

namespace pipesched::runtime::cuda {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
constexpr int kThreads = 256;

// Grid-stride loops: enough blocks to fill the GPU, any n.
unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

#define GRID_STRIDE(i, n)                                                                \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);              \
       i += int64_t(blockDim.x) * gridDim.x)

// The same expressions as kernels.cpp, term for term.
__device__ inline float gelu(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

__device__ inline float geluGrad(float x, float da) {
  const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const float t = tanhf(u);
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return da * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
}

__global__ void biasGeluKernel(float *z, const float *b, float *a, int64_t rows,
                               int64_t out) {
  GRID_STRIDE(k, rows * out) {
    const float v = z[k] + b[k % out];
    z[k] = v;
    if (a)
      a[k] = gelu(v);
  }
}

__global__ void geluBackwardKernel(const float *z, const float *da, float *dz,
                                   int64_t n) {
  GRID_STRIDE(k, n) { dz[k] = geluGrad(z[k], da[k]); }
}

__global__ void biasGradKernel(const float *dy, float *db, int64_t rows, int64_t out) {
  GRID_STRIDE(o, out) {
    float sum = 0.0f;
    for (int64_t r = 0; r < rows; ++r)
      sum += dy[r * out + o];
    db[o] += sum;
  }
}

// Softmax statistics of a row as in data.cpp: the maximum, and the sum of
// exp(row - max) in double.
__device__ void rowSoftmax(const float *row, int64_t H, float &top, double &sum) {
  top = row[0];
  for (int64_t k = 1; k < H; ++k)
    top = row[k] > top ? row[k] : top;
  sum = 0.0;
  for (int64_t k = 0; k < H; ++k)
    sum += exp(double(row[k] - top));
}

__global__ void rowLossKernel(bool ce, const float *y, const float *t, int64_t rows,
                              int64_t H, double *rowLoss) {
  GRID_STRIDE(r, rows) {
    const float *row = y + r * H;
    double l = 0.0;
    if (!ce) {
      for (int64_t k = 0; k < H; ++k) {
        const float diff = row[k] - t[r * H + k];
        l += 0.5 * double(diff) * double(diff);
      }
    } else {
      float top;
      double sum;
      rowSoftmax(row, H, top, sum);
      l = log(sum) - double(row[int64_t(t[r])] - top);
    }
    rowLoss[r] = l;
  }
}

// One block: a fixed split over threads, then a fixed tree, so the sum is
// the same on every run.
__global__ void sumKernel(const double *x, int64_t n, double divisor, double *out) {
  __shared__ double partial[kThreads];
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    *out = partial[0] / divisor;
}

__global__ void mseGradKernel(const float *y, const float *t, int64_t n, float scale,
                              float *grad) {
  GRID_STRIDE(k, n) { grad[k] = (y[k] - t[k]) * scale; }
}

__global__ void ceGradKernel(const float *y, const float *t, int64_t rows, int64_t H,
                             float scale, float *grad) {
  GRID_STRIDE(r, rows) {
    const float *row = y + r * H;
    const int64_t target = int64_t(t[r]);
    float top;
    double sum;
    rowSoftmax(row, H, top, sum);
    for (int64_t k = 0; k < H; ++k) {
      const float p = float(exp(double(row[k] - top)) / sum);
      grad[r * H + k] = (p - (k == target ? 1.0f : 0.0f)) * scale;
    }
  }
}

__global__ void addKernel(float *acc, const float *x, int64_t n) {
  GRID_STRIDE(k, n) { acc[k] = acc[k] + x[k]; }
}

__global__ void sgdKernel(float *p, const float *g, float lr, int64_t n) {
  GRID_STRIDE(k, n) { p[k] -= lr * g[k]; }
}

__global__ void adamKernel(float *p, const float *g, float *m, float *v, float lr,
                           float beta1, float beta2, float eps, float correct1,
                           float correct2, int64_t n) {
  GRID_STRIDE(k, n) {
    const float gk = g[k];
    m[k] = beta1 * m[k] + (1.0f - beta1) * gk;
    v[k] = beta2 * v[k] + (1.0f - beta2) * gk * gk;
    const float mhat = m[k] / correct1;
    const float vhat = v[k] / correct2;
    p[k] -= lr * mhat / (sqrtf(vhat) + eps);
  }
}

#undef GRID_STRIDE

} // namespace

cudaError_t biasGelu(float *z, const float *b, float *a, int64_t rows, int64_t out,
                     cudaStream_t stream) {
  biasGeluKernel<<<blocksFor(rows * out), kThreads, 0, stream>>>(z, b, a, rows, out);
  return cudaGetLastError();
}

cudaError_t geluBackward(const float *z, const float *da, float *dz, int64_t n,
                         cudaStream_t stream) {
  geluBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(z, da, dz, n);
  return cudaGetLastError();
}

cudaError_t biasGrad(const float *dy, float *db, int64_t rows, int64_t out,
                     cudaStream_t stream) {
  biasGradKernel<<<blocksFor(out), kThreads, 0, stream>>>(dy, db, rows, out);
  return cudaGetLastError();
}

cudaError_t loss(bool crossEntropy, const float *y, const float *t, int64_t rows,
                 int64_t hidden, double *rowLoss, double *slot, cudaStream_t stream) {
  rowLossKernel<<<blocksFor(rows), kThreads, 0, stream>>>(crossEntropy, y, t, rows,
                                                          hidden, rowLoss);
  const double divisor = crossEntropy ? double(rows) : double(rows * hidden);
  sumKernel<<<1, kThreads, 0, stream>>>(rowLoss, rows, divisor, slot);
  return cudaGetLastError();
}

cudaError_t lossGrad(bool crossEntropy, const float *y, const float *t, int64_t rows,
                     int64_t hidden, float scale, float *grad, cudaStream_t stream) {
  if (crossEntropy)
    ceGradKernel<<<blocksFor(rows), kThreads, 0, stream>>>(y, t, rows, hidden, scale,
                                                           grad);
  else
    mseGradKernel<<<blocksFor(rows * hidden), kThreads, 0, stream>>>(y, t, rows * hidden,
                                                                     scale, grad);
  return cudaGetLastError();
}

cudaError_t add(float *acc, const float *x, int64_t n, cudaStream_t stream) {
  addKernel<<<blocksFor(n), kThreads, 0, stream>>>(acc, x, n);
  return cudaGetLastError();
}

cudaError_t sgd(float *params, const float *grad, float lr, int64_t n,
                cudaStream_t stream) {
  sgdKernel<<<blocksFor(n), kThreads, 0, stream>>>(params, grad, lr, n);
  return cudaGetLastError();
}

cudaError_t adam(float *params, const float *grad, float *m, float *v, float lr,
                 float beta1, float beta2, float eps, float correct1, float correct2,
                 int64_t n, cudaStream_t stream) {
  adamKernel<<<blocksFor(n), kThreads, 0, stream>>>(params, grad, m, v, lr, beta1, beta2,
                                                    eps, correct1, correct2, n);
  return cudaGetLastError();
}

} // namespace pipesched::runtime::cuda
