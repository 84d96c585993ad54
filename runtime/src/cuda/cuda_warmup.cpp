#include "cuda/cuda_warmup.h"

#include "comm/poll_backoff.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_kernels.h"

#include <vector>

namespace pipesched::runtime::cuda {
namespace {

// Stream-ordered scratch memory, zeroed (so every kernel reads finite
// values), returned to the stream's pool when done.
class Scratch {
public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  ~Scratch() {
    for (void *p : all_)
      cudaFreeAsync(p, stream_);
  }
  template <typename T> T *get(size_t n) {
    void *p = nullptr;
    check(cudaMallocAsync(&p, n * sizeof(T), stream_), "cudaMallocAsync");
    all_.push_back(p);
    check(cudaMemsetAsync(p, 0, n * sizeof(T), stream_), "cudaMemsetAsync");
    return static_cast<T *>(p);
  }

private:
  cudaStream_t stream_;
  std::vector<void *> all_;
};

// A poll with a deadline instead of cudaStreamSynchronize, which has none.
void synchronize(cudaStream_t stream, double seconds) {
  Deadline deadline(seconds);
  PollBackoff backoff;
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      check(e, "the warm-up");
    if (deadline.expired())
      setupTimedOut("the GPU warm-up", seconds);
    backoff.pause();
  }
}

} // namespace

void warmUp(CudaMlp &mlp, int64_t rows, int64_t hidden, size_t stageParams,
            cudaStream_t stream, double seconds) {
  const size_t block = size_t(rows * hidden), small = size_t(hidden);
  {
    Scratch s(stream);
    float *params = s.get<float>(stageParams), *grads = s.get<float>(stageParams);
    float *in = s.get<float>(block), *out = s.get<float>(block);
    float *gradOut = s.get<float>(block), *gradIn = s.get<float>(block);
    float *targets = s.get<float>(block); // zeros: class 0 for cross-entropy
    double *rowLoss = s.get<double>(size_t(rows)), *slot = s.get<double>(1);
    float *m = s.get<float>(small), *v = s.get<float>(small);

    mlp.forward(params, in, out);
    mlp.backward(params, in, gradOut, gradIn, grads);
    for (bool ce : {false, true}) {
      check(loss(ce, out, targets, rows, hidden, rowLoss, slot, stream), "loss kernel");
      check(lossGrad(ce, out, targets, rows, hidden, 1.0f, gradOut, stream),
            "loss gradient kernel");
    }
    check(add(out, in, int64_t(block), stream), "add kernel");
    // After the losses, which read zeros as classes.
    check(generateInput(0, in, int64_t(block), stream), "input kernel");
    for (bool ce : {false, true})
      check(generateTargets(ce, 0, targets, rows, hidden, stream), "targets kernel");
    check(sgd(params, grads, 0.0f, int64_t(small), stream), "sgd kernel");
    check(adam(params, grads, m, v, 0.0f, 0.9f, 0.999f, 1e-8f, 1.0f, 1.0f, int64_t(small),
               stream),
          "adam kernel");
  }
  synchronize(stream, seconds);
}

} // namespace pipesched::runtime::cuda
