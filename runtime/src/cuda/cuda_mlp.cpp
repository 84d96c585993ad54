#include "cuda/cuda_mlp.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_kernels.h"

#include <climits>
#include <stdexcept>
#include <string>

namespace pipesched::runtime::cuda {
namespace {

void checkBlas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

// NVIDIA's recommendation on Hopper: 32 MiB (cuBLAS's default is 4 MiB),
// room for the split-K and stream-K kernels that large shapes pick.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

// A GEMM may run as a kernel plus a split-K reduction, after a memset of
// its partial sums.
constexpr size_t kCommandsPerGemm = 3;

} // namespace

CudaMlp::CudaMlp(int64_t hidden, int64_t layers, int64_t rows, cudaStream_t stream)
    : H_(hidden), L_(layers), rows_(rows), stream_(stream) {
  if (rows * hidden > INT_MAX)
    throw std::runtime_error("--batch x --hidden exceeds cuBLAS's int dimensions");
  checkBlas(cublasCreate(&handle_), "cublasCreate");
  checkBlas(cublasSetStream(handle_, stream), "cublasSetStream");
  // Float32 as written: no TF32 or other reduced-precision tensor-core math.
  checkBlas(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  // A workspace of its own, allocated now: no allocation while NCCL kernels
  // run, and the same kernels (hence sums) on every call.
  check(cudaMalloc(&cublasWorkspace_, kCublasWorkspaceBytes), "cudaMalloc");
  checkBlas(cublasSetWorkspace(handle_, cublasWorkspace_, kCublasWorkspaceBytes),
            "cublasSetWorkspace");
  check(cudaMalloc(reinterpret_cast<void **>(&ws_),
                   size_t(2 * L_ + 1) * size_t(rows_ * H_) * sizeof(float)),
        "cudaMalloc");
}

CudaMlp::~CudaMlp() {
  if (handle_)
    cublasDestroy(handle_);
  cudaFree(ws_);
  cudaFree(cublasWorkspace_);
}

void CudaMlp::gemm(cublasOperation_t opA, cublasOperation_t opB, int64_t m, int64_t n,
                   int64_t k, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float beta, float *C, int64_t ldc) {
  const float one = 1.0f;
  checkBlas(cublasSgemm(handle_, opA, opB, int(m), int(n), int(k), &one, A, int(lda), B,
                        int(ldb), &beta, C, int(ldc)),
            "cublasSgemm");
}

// Row-major X[rows][H] is, to cuBLAS, the column-major H x rows matrix X^T,
// and W[out][in] the column-major in x out matrix W^T. So Y = X W^T is
// Y^T = (W^T)^T X^T: gemm(T, N, m = out, n = rows, k = in).
void CudaMlp::run(const float *params, const float *in, float *out) {
  const int64_t block = rows_ * H_, layer = H_ * H_ + H_;
  const float *a = in;
  for (int64_t l = 0; l < L_; ++l) {
    const float *w = params + l * layer;
    float *z = ws_ + l * block;
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, H_, rows_, H_, w, H_, a, H_, 0.0f, z, H_);
    float *next = l + 1 == L_ ? out : ws_ + (L_ + l) * block;
    check(biasGelu(z, w + H_ * H_, next, rows_, H_, stream_), "biasGelu");
    a = next;
  }
}

void CudaMlp::forward(const float *params, const float *in, float *out) {
  run(params, in, out);
}

// Per layer: a GEMM and biasGelu.
size_t CudaMlp::forwardCommands() const { return size_t(L_) * (kCommandsPerGemm + 1); }

// The forward again, then per layer geluBackward, the weight gradient (a
// GEMM and biasGrad) and the input gradient (a GEMM).
size_t CudaMlp::backwardCommands(bool gradIn, bool gradParams) const {
  if (!gradIn && !gradParams)
    return 0;
  const size_t weights = gradParams ? kCommandsPerGemm + 1 : 0;
  return forwardCommands() + size_t(L_) * (1 + weights + kCommandsPerGemm);
}

void CudaMlp::backward(const float *params, const float *in, const float *gradOut,
                       float *gradIn, float *gradParams) {
  if (!gradIn && !gradParams)
    return;
  const int64_t block = rows_ * H_, layer = H_ * H_ + H_;
  run(params, in, nullptr);
  float *gz = ws_ + (2 * L_ - 1) * block;
  float *ga = ws_ + 2 * L_ * block;
  const float *g = gradOut;
  for (int64_t l = L_ - 1; l >= 0; --l) {
    const float *w = params + l * layer;
    const float *z = ws_ + l * block;
    const float *a = l == 0 ? in : ws_ + (L_ + l - 1) * block;
    check(geluBackward(z, g, gz, block, stream_), "geluBackward");
    if (gradParams) {
      // dW[out][in] += dZ^T A: column-major dW^T (in x out) += A^T dZ,
      // gemm(N, T, m = in, n = out, k = rows).
      float *gw = gradParams + l * layer;
      gemm(CUBLAS_OP_N, CUBLAS_OP_T, H_, H_, rows_, a, H_, gz, H_, 1.0f, gw, H_);
      check(biasGrad(gz, gw + H_ * H_, rows_, H_, stream_), "biasGrad");
    }
    // dA[rows][in] = dZ W: column-major dA^T (in x rows) = W^T dZ^T,
    // gemm(N, N, m = in, n = rows, k = out).
    float *dst = l > 0 ? ga : gradIn;
    if (dst)
      gemm(CUBLAS_OP_N, CUBLAS_OP_N, H_, rows_, H_, w, H_, gz, H_, 0.0f, dst, H_);
    g = ga;
  }
}

} // namespace pipesched::runtime::cuda
