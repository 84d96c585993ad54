// The CUDA backend's small kernels (cuda_kernels.cu): everything of the MLP,
// the data, the loss and the optimizers that is not a matrix product (cuBLAS does
// those, cuda_mlp.h). Each launcher queues one or two kernels on `stream`
// and returns cudaGetLastError(). Formulas and float rounding follow
// kernels.cpp, data.cpp and optimizer.cpp (built with --fmad=false, like
// -ffp-contract=off on the host); sums run as parallel reductions in a
// fixed order (a block per row, or per 32 columns), so every run gives the
// same bits, though not the host's sequential ones.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace pipesched::runtime::cuda {

// z[r][o] += b[o]; then a = GELU(z) (tanh approximation) unless a is null.
cudaError_t biasGelu(float *z, const float *b, float *a, int64_t rows, int64_t out,
                     cudaStream_t stream);
// dz = da * GELU'(z).
cudaError_t geluBackward(const float *z, const float *da, float *dz, int64_t n,
                         cudaStream_t stream);
// db[o] += (sum over r of dy[r][o]), in a fixed order.
cudaError_t biasGrad(const float *dy, float *db, int64_t rows, int64_t out,
                     cudaStream_t stream);

// The loss of one microbatch (data.h): *slot = mean loss, summed in double
// in a fixed order (rowLoss: `rows` doubles of scratch). t: the targets of
// makeTargets (MSE: rows x hidden values; CE: one class per row).
cudaError_t loss(bool crossEntropy, const float *y, const float *t, int64_t rows,
                 int64_t hidden, double *rowLoss, double *slot, cudaStream_t stream);
// grad = dloss_b/dy * scale, scale = 1 / (rows x hidden x B) for MSE,
// 1 / (rows x B) for CE.
cudaError_t lossGrad(bool crossEntropy, const float *y, const float *t, int64_t rows,
                     int64_t hidden, float scale, float *grad, cudaStream_t stream);

// The data of (step, microbatch) on the device, bit for bit as data.cpp's
// makeInput and makeTargets (the shared core, data_gen.h); key:
// datagen::key(seed, step, microbatch). x: rows x hidden inputs (n floats);
// t: MSE's rows x hidden targets, or cross-entropy's class per row.
cudaError_t generateInput(uint64_t key, float *x, int64_t n, cudaStream_t stream);
cudaError_t generateTargets(bool crossEntropy, uint64_t key, float *t, int64_t rows,
                            int64_t hidden, cudaStream_t stream);

// acc[k] = acc[k] + x[k] (a fan-in sum of the stage graph).
cudaError_t add(float *acc, const float *x, int64_t n, cudaStream_t stream);

// params -= lr * grad.
cudaError_t sgd(float *params, const float *grad, float lr, int64_t n,
                cudaStream_t stream);
// Adam with bias corrections correct1 = 1 - beta1^t, correct2 = 1 - beta2^t.
cudaError_t adam(float *params, const float *grad, float *m, float *v, float lr,
                 float beta1, float beta2, float eps, float correct1, float correct2,
                 int64_t n, cudaStream_t stream);

} // namespace pipesched::runtime::cuda
