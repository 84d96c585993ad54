// The device interface of the executor: tensor memory, stage compute, data
// and loss, point-to-point transfers and gradient collectives. The executor
// keeps the op sequencing (program order, liveness, weights and gradient
// buffers); a backend only says how each step runs where. Backends:
// cpu_backend.h (host memory, the Model, MPI) and cuda/cuda_backend.h
// (device memory, cuBLAS, NCCL).
//
// A backend may run work asynchronously (the CUDA one queues it on streams):
// every call only has to respect program order for the buffers it touches,
// and finishStep() waits for all of it.
#pragma once

#include "exec/link_probe.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pipesched::runtime {

namespace bppsa {
enum class Storage : uint8_t;
} // namespace bppsa

// Floats in a backend's memory; only the backend that made a buffer reads
// or writes it. Destroying it hands the memory back to the backend.
class Buffer {
public:
  virtual ~Buffer() = default;
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(float); }

protected:
  explicit Buffer(size_t n) : size_(n) {}

private:
  size_t size_;
};
using BufferPtr = std::unique_ptr<Buffer>;

// A buffer in host memory (the CPU backend's, and the unit tests').
class HostBuffer final : public Buffer {
public:
  explicit HostBuffer(size_t n) : Buffer(n), data(n, 0.0f) {}
  std::vector<float> data;
};

inline float *hostData(Buffer &b) { return static_cast<HostBuffer &>(b).data.data(); }
inline const float *hostData(const Buffer &b) {
  return static_cast<const HostBuffer &>(b).data.data();
}

// One executed op: its index in the rank's program and when it ran,
// in nanoseconds since the start of its step.
struct OpTiming {
  int32_t step, op;
  int64_t startNs, endNs;
};

// No op starts before its step nor ends before it starts: device times
// taken on two streams (cuda) are clamped so, whatever the rounding of
// their events, and a timeline or trace shows no negative time.
inline OpTiming clampedToStep(OpTiming t) {
  t.startNs = t.startNs < 0 ? 0 : t.startNs;
  t.endNs = t.endNs < t.startNs ? t.startNs : t.endNs;
  return t;
}

// One send or receive of a group (a lone transfer is a group of one).
struct Transfer {
  bool outgoing;
  Buffer *buffer;
  int peer;
  int64_t tag;
};

// Where a wait gave up: the op (index into the rank's program), for a group
// the positions of its transfers still pending (empty: all of them), and an
// error message (empty: the deadline passed).
struct Stall {
  size_t op = 0;
  std::vector<size_t> pending;
  std::string error;
};

class Backend {
public:
  virtual ~Backend() = default;

  // The set-up that may fail (the CUDA backend's device, warm-up and
  // communicators), once, before any other call. The driver calls it inside
  // the job's abort scope (abort_job.h), so that an error ends the job at
  // once, aborting what was set up, instead of unwinding through the
  // destructors of what was (under cuda, NCCL's tear-down waits for the
  // peers) before the error is printed. Constructors only keep the
  // configuration.
  virtual void start() {}

  // Memory. allocate: contents undefined until written (the CPU backend
  // zeroes). download waits for the buffer's pending writes.
  virtual BufferPtr allocate(size_t n) = 0;
  virtual void zero(Buffer &b) = 0;
  virtual void upload(Buffer &dst, const float *host) = 0;
  virtual void download(const Buffer &src, float *host) = 0;
  // dst = src and acc += x, element by element (acc[i] + x[i], one rounding):
  // the sums where stages fan in (a forward's inputs, the gradients of a
  // stage with several successors), in the order the executor calls them.
  virtual void copy(Buffer &dst, const Buffer &src) = 0;
  virtual void add(Buffer &acc, const Buffer &x) = 0;
  // The same on n floats at offsets (a tied weight inside a stage's
  // gradient, tied_grad): dst[do..] = src[so..], acc[ao..] += x[xo..]. A
  // backend without them refuses tied programs (the base class throws).
  virtual void copyRange(Buffer &dst, size_t dstOffset, const Buffer &src,
                         size_t srcOffset, size_t n);
  virtual void addRange(Buffer &acc, size_t accOffset, const Buffer &x, size_t xOffset,
                        size_t n);

  // Every op is bracketed, so that the backend can time its device work and
  // name the op that a later wait gives up in. `communication`: the op's
  // work runs on a communication stream (runsOnCommunicationStream, program.h).
  virtual void beginStep(int step) { (void)step; }
  virtual void beginOp(size_t index, bool communication) {
    (void)index;
    (void)communication;
  }
  virtual void endOp() {}

  // Compute (boundary tensors are rows x hidden; the model's semantics,
  // model.h). input: microbatch b's data, valid until the next call.
  virtual const Buffer &input(int step, int microbatch) = 0;
  virtual void forward(int stage, const Buffer &params, const Buffer &in,
                       Buffer &out) = 0;
  // gradIn may be null (stage 0, or backward_weight); gradParams null
  // unless the weight gradient is wanted, else it is added to.
  virtual void backward(int stage, const Buffer &params, const Buffer &in,
                        const Buffer &gradOut, Buffer *gradIn, Buffer *gradParams) = 0;
  // A scanned backward (BPPSA, docs/bppsa.md): stage s's transposed
  // Jacobian at `in` into `out`, and out = rhs * lhs (lhs a vector when
  // `vector`, rhs a Jacobian product), scan tensors in `storage`'s layout
  // (bppsa_exec.h). A backend without them refuses scanned programs first.
  virtual void jacobian(int stage, const Buffer &params, const Buffer &in,
                        bppsa::Storage storage, Buffer &out);
  virtual void combine(bool vector, const Buffer &lhs, const Buffer &rhs,
                       bppsa::Storage storage, Buffer &out);
  // Adds loss_b of a sink stage's output y to the step's loss sum.
  virtual void addLoss(int step, int microbatch, const Buffer &y) = 0;
  // grad = dTotal/dy (data.h, lossAndGrad).
  virtual void lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) = 0;
  // params -= update(grad) with the stage's optimizer state; zeroes grad.
  virtual void optimizerStep(int stage, Buffer &params, Buffer &grad) = 0;

  // Communication. False when a wait gave up (see stall()).
  virtual bool transfer(const Transfer *transfers, size_t count) = 0;
  // Sums over program.groups[group] in place / onto `root` (a world rank).
  virtual bool allreduce(Buffer &grad, int group) = 0;
  virtual bool reduce(Buffer &grad, int root, int group) = 0;

  // Waits for all of the step's work; lossSum: the sum of the step's addLoss
  // values in call order. False when a wait gave up.
  virtual bool finishStep(double &lossSum) = 0;
  // --profile's measurement of the link, after the steps: a probe through
  // the path this backend's transfers and collectives take (link_probe.h).
  // Collective over every rank.
  virtual std::unique_ptr<LinkProbe> linkProbe() = 0;

  // Replaces the host times of the step's ops by device times, if it has them.
  virtual void deviceTimes(OpTiming *ops, size_t count) {
    (void)ops;
    (void)count;
  }

  // A wait inside another call gave up (an asynchronous backend waits for
  // staging memory or for room in its queue); the executor checks after
  // every op. stall() says where.
  bool failed() const { return failed_; }
  const Stall &stall() const { return stall_; }
  virtual double timeout() const = 0;
  // Called after a stall, before the job is aborted (NCCL: abort communicators).
  virtual void abort() {}

protected:
  Stall stall_;
  bool failed_ = false;
};

} // namespace pipesched::runtime
