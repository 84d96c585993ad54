#include "cuda/cuda_kernels.h"

#include "model/data_gen.h"

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

// Reductions run a block per row (or per 32 columns), in a fixed order:
// each thread sums a fixed strided share, then a fixed tree combines the
// shares, so every run of a kernel gives the same bits.
constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;
constexpr unsigned kAllLanes = 0xffffffffu;
// Thread rows of a bias-gradient block (kWarp columns x kBiasRows).
constexpr int kBiasRows = 16;

// One warp step of a reduction: lane i gets lane i + offset's value.
template <typename T> __device__ T shuffleDown(T v, int offset) {
  return __shfl_down_sync(kAllLanes, v, offset);
}
__device__ datagen::Candidate shuffleDown(datagen::Candidate c, int offset) {
  return datagen::Candidate{__shfl_down_sync(kAllLanes, c.value, offset),
                            __shfl_down_sync(kAllLanes, c.index, offset)};
}

template <typename T> struct Sum {
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};
struct Better {
  __device__ datagen::Candidate operator()(datagen::Candidate a,
                                           datagen::Candidate b) const {
    return datagen::better(a, b);
  }
};

// Over the kThreads threads of a block: each warp by a shuffle tree, then
// warp 0 the warps' results the same way (identity where there is none).
// Every thread gets the result; `shared` (kWarps values) is free again on
// return.
template <typename T, typename Op>
__device__ T blockReduce(T v, T identity, Op op, T *shared) {
  const int lane = int(threadIdx.x) % kWarp, warp = int(threadIdx.x) / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v = op(v, shuffleDown(v, offset));
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? shared[lane] : identity;
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      v = op(v, shuffleDown(v, offset));
    if (lane == 0)
      shared[0] = v;
  }
  __syncthreads();
  const T result = shared[0];
  __syncthreads();
  return result;
}

// Blocks of row kernels: one per row, up to a grid-stride bound.
unsigned rowBlocks(int64_t rows) { return unsigned(rows < 1 ? 1 : rows > 4096 ? 4096 : rows); }

#define ROW_STRIDE(r, rows) for (int64_t r = blockIdx.x; r < (rows); r += gridDim.x)
#define IN_ROW(k, n) for (int64_t k = threadIdx.x; k < (n); k += kThreads)

// A block of kWarp columns x kBiasRows thread rows: a warp reads kWarp
// adjacent columns of a row (coalesced); each thread sums every kBiasRows-th
// row of its column, then a fixed tree adds the thread rows.
__global__ void biasGradKernel(const float *dy, float *db, int64_t rows, int64_t out) {
  __shared__ float partial[kBiasRows][kWarp + 1];
  const int64_t o = int64_t(blockIdx.x) * kWarp + threadIdx.x;
  float sum = 0.0f;
  if (o < out)
    for (int64_t r = threadIdx.y; r < rows; r += kBiasRows)
      sum += dy[r * out + o];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  for (int half = kBiasRows / 2; half > 0; half /= 2) {
    if (int(threadIdx.y) < half)
      partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + half][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && o < out)
    db[o] += partial[0][threadIdx.x];
}

// Softmax statistics of a row as in data.cpp, over the block: the maximum,
// and the sum of exp(row - max) in double.
__device__ void rowSoftmax(const float *row, int64_t H, float &top, double &sum,
                           float *sharedF, double *sharedD) {
  float t = -INFINITY;
  IN_ROW(k, H) { t = row[k] > t ? row[k] : t; }
  top = blockReduce(t, -INFINITY, Max(), sharedF);
  double s = 0.0;
  IN_ROW(k, H) { s += exp(double(row[k] - top)); }
  sum = blockReduce(s, 0.0, Sum<double>(), sharedD);
}

__global__ void rowLossKernel(bool ce, const float *y, const float *t, int64_t rows,
                              int64_t H, double *rowLoss) {
  __shared__ float sharedF[kWarps];
  __shared__ double sharedD[kWarps];
  ROW_STRIDE(r, rows) {
    const float *row = y + r * H;
    double l;
    if (!ce) {
      double s = 0.0;
      IN_ROW(k, H) {
        const float diff = row[k] - t[r * H + k];
        s += 0.5 * double(diff) * double(diff);
      }
      l = blockReduce(s, 0.0, Sum<double>(), sharedD);
    } else {
      float top;
      double sum;
      rowSoftmax(row, H, top, sum, sharedF, sharedD);
      l = log(sum) - double(row[int64_t(t[r])] - top);
    }
    if (threadIdx.x == 0)
      rowLoss[r] = l;
  }
}

// One block sums the rows' losses.
__global__ void sumKernel(const double *x, int64_t n, double divisor, double *out) {
  __shared__ double shared[kWarps];
  double s = 0.0;
  IN_ROW(i, n) { s += x[i]; }
  s = blockReduce(s, 0.0, Sum<double>(), shared);
  if (threadIdx.x == 0)
    *out = s / divisor;
}

__global__ void mseGradKernel(const float *y, const float *t, int64_t n, float scale,
                              float *grad) {
  GRID_STRIDE(k, n) { grad[k] = (y[k] - t[k]) * scale; }
}

__global__ void ceGradKernel(const float *y, const float *t, int64_t rows, int64_t H,
                             float scale, float *grad) {
  __shared__ float sharedF[kWarps];
  __shared__ double sharedD[kWarps];
  ROW_STRIDE(r, rows) {
    const float *row = y + r * H;
    const int64_t target = int64_t(t[r]);
    float top;
    double sum;
    rowSoftmax(row, H, top, sum, sharedF, sharedD);
    IN_ROW(k, H) {
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

// The data of data.h, element by element as data.cpp (data_gen.h): the
// same bits.
__global__ void inputKernel(uint64_t key, float *x, int64_t n) {
  GRID_STRIDE(k, n) { x[k] = datagen::input(key, k); }
}

__global__ void mseTargetKernel(uint64_t key, float *t, int64_t n) {
  GRID_STRIDE(k, n) { t[k] = datagen::mseTarget(key, k); }
}

// A block per row: each thread keeps the better of its share of the row's
// candidates, a tree keeps the better of those; better() is associative
// and commutative, so the class is the host scan's (the first largest).
__global__ void ceTargetKernel(uint64_t key, float *t, int64_t rows, int64_t H) {
  __shared__ datagen::Candidate shared[kWarps];
  const datagen::Candidate none{-INFINITY, H}; // loses to every input
  ROW_STRIDE(r, rows) {
    datagen::Candidate best = none;
    IN_ROW(k, H) { best = datagen::better(best, datagen::candidate(key, r, H, k)); }
    best = blockReduce(best, none, Better(), shared);
    if (threadIdx.x == 0)
      t[r] = float(best.index); // exact: H <= 2^14
  }
}

#undef GRID_STRIDE
#undef ROW_STRIDE
#undef IN_ROW

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
  const unsigned columnBlocks = unsigned((out + kWarp - 1) / kWarp);
  biasGradKernel<<<columnBlocks, dim3(kWarp, kBiasRows), 0, stream>>>(dy, db, rows, out);
  return cudaGetLastError();
}

cudaError_t loss(bool crossEntropy, const float *y, const float *t, int64_t rows,
                 int64_t hidden, double *rowLoss, double *slot, cudaStream_t stream) {
  rowLossKernel<<<rowBlocks(rows), kThreads, 0, stream>>>(crossEntropy, y, t, rows,
                                                          hidden, rowLoss);
  const double divisor = crossEntropy ? double(rows) : double(rows * hidden);
  sumKernel<<<1, kThreads, 0, stream>>>(rowLoss, rows, divisor, slot);
  return cudaGetLastError();
}

cudaError_t lossGrad(bool crossEntropy, const float *y, const float *t, int64_t rows,
                     int64_t hidden, float scale, float *grad, cudaStream_t stream) {
  if (crossEntropy)
    ceGradKernel<<<rowBlocks(rows), kThreads, 0, stream>>>(y, t, rows, hidden, scale,
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

cudaError_t generateInput(uint64_t key, float *x, int64_t n, cudaStream_t stream) {
  inputKernel<<<blocksFor(n), kThreads, 0, stream>>>(key, x, n);
  return cudaGetLastError();
}

cudaError_t generateTargets(bool crossEntropy, uint64_t key, float *t, int64_t rows,
                            int64_t hidden, cudaStream_t stream) {
  if (crossEntropy)
    ceTargetKernel<<<rowBlocks(rows), kThreads, 0, stream>>>(key, t, rows, hidden);
  else
    mseTargetKernel<<<blocksFor(rows * hidden), kThreads, 0, stream>>>(key, t,
                                                                       rows * hidden);
  return cudaGetLastError();
}

} // namespace pipesched::runtime::cuda
