// The built-in MLP on the GPU: every stage is `layers` x (Linear(H, H) with
// bias, then GELU), parameters laid out as mlp_stage.cpp (per layer W
// [out][in] row-major, then b). The Linear products run on cuBLAS SGEMM in
// float32 with CUBLAS_PEDANTIC_MATH (no TF32, no reduced precision); the
// rest on the kernels of cuda_kernels.h. All work goes to one stream.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace pipesched::runtime::cuda {

class CudaMlp {
public:
  CudaMlp(int64_t hidden, int64_t layers, int64_t rows, cudaStream_t stream);
  ~CudaMlp();
  CudaMlp(const CudaMlp &) = delete;
  CudaMlp &operator=(const CudaMlp &) = delete;

  // out = F(in); in and out: rows x hidden.
  void forward(const float *params, const float *in, float *out);
  // gradIn (if not null) = dL/din; gradParams (if not null) += dL/dparams.
  // Recomputes the internals from `in`, as the CPU model does.
  void backward(const float *params, const float *in, const float *gradOut, float *gradIn,
                float *gradParams);

  // Upper bounds of the GPU commands each call queues (command_ledger.h).
  size_t forwardCommands() const;
  size_t backwardCommands(bool gradIn, bool gradParams) const;

private:
  void run(const float *params, const float *in, float *out);
  // C[m x n] = alpha op(A) op(B) + beta C, column-major (cuBLAS's view of
  // our row-major matrices, transposed).
  void gemm(cublasOperation_t opA, cublasOperation_t opB, int64_t m, int64_t n, int64_t k,
            const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
            float *C, int64_t ldc);

  int64_t H_, L_, rows_;
  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
  void *cublasWorkspace_ = nullptr;
  float *ws_ = nullptr; // Z_0..Z_{L-1}, A_1..A_{L-1}, two gradient blocks
};

} // namespace pipesched::runtime::cuda
