// The CUDA backend (cuda_backend.h). Two streams per rank: compute (cuBLAS
// and kernels) and communication (NCCL, higher priority). The host queues
// each op on its stream and moves on; the buffers' events (cuda_memory.h)
// order the streams: a compute op waits for the receives it reads, a send
// for the compute that produced its tensor. Waits and timeouts: the
// OpTracker (cuda_tracker.h).
#include "cuda_backend.h"

#include "cuda_check.h"
#include "cuda_kernels.h"
#include "cuda_memory.h"
#include "cuda_mlp.h"
#include "cuda_tracker.h"
#include "nccl_comms.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <stdexcept>

namespace pipesched::runtime {
namespace cuda {
namespace {

// Host staging buffers for inputs and targets (pinned, so the copies are
// asynchronous); a slot is reused once its copy has finished.
constexpr size_t kStagingSlots = 4;

class CudaBackend final : public Backend {
public:
  CudaBackend(MPI_Comm world, const CudaBackendConfig &config);
  ~CudaBackend() override;

  BufferPtr allocate(size_t n) override { return pool_->get(n); }
  void zero(Buffer &b) override;
  void upload(Buffer &dst, const float *host) override;
  void download(const Buffer &src, float *host) override;
  void copy(Buffer &dst, const Buffer &src) override;
  void add(Buffer &acc, const Buffer &x) override;

  void beginStep(int) override;
  void beginOp(size_t index, bool communication) override;
  void endOp() override { tracker_->endOp(); }

  const Buffer &input(int step, int microbatch) override;
  void forward(int stage, const Buffer &params, const Buffer &in, Buffer &out) override;
  void backward(int stage, const Buffer &params, const Buffer &in, const Buffer &gradOut,
                Buffer *gradIn, Buffer *gradParams) override;
  void addLoss(int step, int microbatch, const Buffer &y) override;
  void lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) override;
  void optimizerStep(int stage, Buffer &params, Buffer &grad) override;

  bool transfer(const Transfer *transfers, size_t count) override;
  bool allreduce(Buffer &grad, int group) override;
  bool reduce(Buffer &grad, int root, int group) override;

  bool finishStep(double &lossSum) override;
  void deviceTimes(OpTiming *ops, size_t count) override {
    tracker_->deviceTimes(ops, count);
  }
  double timeout() const override { return config_.timeout; }
  void abort() override {
    if (nccl_)
      nccl_->abort();
  }

private:
  using Buffers = std::initializer_list<const Buffer *>; // nulls are skipped
  // Stream ordering: wait for the other stream's last use of each buffer,
  // then (after the work) record this stream's.
  void waitFor(cudaStream_t stream, const Buffer &b);
  void computeBegin(Buffers buffers);
  void computeEnd(Buffers buffers);
  void commEnd(const Transfer *transfers, size_t count, Buffer *single);
  void stage(DeviceBuffer &dst, size_t count, const std::function<void(float *)> &fill);
  bool fail() {
    failed_ = true;
    return false;
  }
  // Waits until NCCL has enqueued the op on `comm`; false on error/timeout.
  bool enqueued(ncclComm_t comm, ncclResult_t issued);

  CudaBackendConfig config_;
  const Program &program_;
  size_t block_;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  EventPool syncEvents_{false}, timingEvents_{true};
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<NcclComms> nccl_;
  std::unique_ptr<CudaMlp> mlp_;
  std::unique_ptr<OpTracker> tracker_;
  std::unique_ptr<DeviceBuffer> input_, targets_;
  struct Slot {
    float *host = nullptr;
    EventRef copied;
  };
  std::vector<Slot> slots_;
  size_t nextSlot_ = 0;
  double *rowLoss_ = nullptr, *lossSlots_ = nullptr;
  int losses_ = 0, lossCapacity_;
  std::vector<BufferPtr> moments_; // Adam: m of stage s at 2s, v at 2s + 1
  std::vector<int64_t> applied_;   // optimizer steps per stage
};

CudaBackend::CudaBackend(MPI_Comm world, const CudaBackendConfig &c)
    : config_(c), program_(*c.program), block_(size_t(c.data.rows * c.data.hidden)),
      // One loss per sink stage and microbatch.
      lossCapacity_(std::max(1, c.data.microbatches * c.program->graph.sinks())) {
  check(cudaSetDevice(c.device), "cudaSetDevice");
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest),
        "cudaDeviceGetStreamPriorityRange");
  check(cudaStreamCreateWithPriority(&compute_, cudaStreamNonBlocking, least),
        "cudaStreamCreate");
  // Transfers first when both streams have work ready: a peer may wait on them.
  check(cudaStreamCreateWithPriority(&comm_, cudaStreamNonBlocking, greatest),
        "cudaStreamCreate");
  pool_ = std::make_unique<BufferPool>(compute_, syncEvents_);
  nccl_ = std::make_unique<NcclComms>(world, program_, c.rank, c.timeout);
  mlp_ = std::make_unique<CudaMlp>(c.shape.hidden, c.shape.layers, c.data.rows, compute_);
  tracker_ = std::make_unique<OpTracker>(compute_, comm_, timingEvents_, c.timeout,
                                         [this] { return nccl_->asyncError(); });
  input_ = pool_->get(block_);
  targets_ = pool_->get(block_);
  slots_.resize(kStagingSlots);
  for (Slot &s : slots_)
    check(cudaMallocHost(reinterpret_cast<void **>(&s.host), block_ * sizeof(float)),
          "cudaMallocHost");
  check(cudaMalloc(reinterpret_cast<void **>(&rowLoss_),
                   size_t(c.data.rows) * sizeof(double)),
        "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void **>(&lossSlots_),
                   size_t(lossCapacity_) * sizeof(double)),
        "cudaMalloc");
  moments_.resize(2 * size_t(program_.stages));
  applied_.assign(size_t(program_.stages), 0);
  check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
  if (c.rank == 0) { // which GPU and NCCL ran, for the logs of GPU checks
    cudaDeviceProp prop{};
    int v = 0;
    cudaGetDeviceProperties(&prop, c.device);
    ncclGetVersion(&v);
    std::printf("backend cuda: rank 0 on device %d (%s), NCCL %d.%d.%d\n", c.device,
                prop.name, v / 10000, v / 100 % 100, v % 100);
    std::fflush(stdout);
  }
}

// Buffers go back to the pool before it frees the memory, events to their
// pools before those go; communicators are finalized with the device idle.
CudaBackend::~CudaBackend() {
  cudaStreamSynchronize(comm_);
  cudaStreamSynchronize(compute_);
  moments_.clear();
  input_.reset();
  targets_.reset();
  tracker_.reset();
  mlp_.reset();
  nccl_.reset();
  pool_.reset();
  for (Slot &s : slots_)
    cudaFreeHost(s.host);
  slots_.clear();
  cudaFree(rowLoss_);
  cudaFree(lossSlots_);
  cudaStreamDestroy(comm_);
  cudaStreamDestroy(compute_);
}

void CudaBackend::waitFor(cudaStream_t stream, const Buffer &b) {
  const DeviceBuffer &d = dev(b);
  EventRef &other = stream == compute_ ? d.commUse : d.computeUse;
  if (other) {
    check(cudaStreamWaitEvent(stream, other.get(), 0), "cudaStreamWaitEvent");
    other.reset(); // this stream is now ordered after it for good
  }
}

void CudaBackend::computeBegin(Buffers buffers) {
  for (const Buffer *b : buffers)
    if (b)
      waitFor(compute_, *b);
  tracker_->started();
}

void CudaBackend::computeEnd(Buffers buffers) {
  EventRef done = syncEvents_.record(compute_);
  for (const Buffer *b : buffers)
    if (b)
      dev(*b).computeUse = done;
}

void CudaBackend::commEnd(const Transfer *transfers, size_t count, Buffer *single) {
  EventRef done = syncEvents_.record(comm_);
  for (size_t i = 0; i < count; ++i)
    dev(*transfers[i].buffer).commUse = done;
  if (single)
    dev(*single).commUse = done;
}

void CudaBackend::zero(Buffer &b) {
  waitFor(compute_, b);
  check(cudaMemsetAsync(dev(b).ptr, 0, b.bytes(), compute_), "cudaMemsetAsync");
  computeEnd({&b});
}

// Only before the steps (initial weights): a synchronous copy.
void CudaBackend::upload(Buffer &dst, const float *host) {
  waitFor(compute_, dst);
  check(
      cudaMemcpyAsync(dev(dst).ptr, host, dst.bytes(), cudaMemcpyHostToDevice, compute_),
      "cudaMemcpyAsync");
  check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
  computeEnd({&dst});
}

// Only after the steps (--verify): the streams are idle.
void CudaBackend::download(const Buffer &src, float *host) {
  waitFor(compute_, src);
  check(
      cudaMemcpyAsync(host, dev(src).ptr, src.bytes(), cudaMemcpyDeviceToHost, compute_),
      "cudaMemcpyAsync");
  check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
}

void CudaBackend::copy(Buffer &dst, const Buffer &src) {
  computeBegin({&dst, &src});
  check(cudaMemcpyAsync(dev(dst).ptr, dev(src).ptr, dst.bytes(), cudaMemcpyDeviceToDevice,
                        compute_),
        "cudaMemcpyAsync");
  computeEnd({&dst, &src});
}

void CudaBackend::add(Buffer &acc, const Buffer &x) {
  computeBegin({&acc, &x});
  check(cuda::add(dev(acc).ptr, dev(x).ptr, int64_t(acc.size()), compute_), "add kernel");
  computeEnd({&acc, &x});
}

void CudaBackend::beginStep(int) {
  tracker_->beginStep();
  losses_ = 0;
}

void CudaBackend::beginOp(size_t index, bool communication) {
  if (!tracker_->throttle(stall_))
    failed_ = true;
  tracker_->beginOp(index, communication);
}

// Data come from the host's counter-based RNG (data.h), as on the CPU;
// only the compute stream reads input_ and targets_, so its order suffices.
void CudaBackend::stage(DeviceBuffer &dst, size_t count,
                        const std::function<void(float *)> &fill) {
  Slot &s = slots_[nextSlot_++ % slots_.size()];
  if (s.copied && !tracker_->wait(s.copied.get(), stall_)) {
    failed_ = true;
    return;
  }
  fill(s.host);
  check(cudaMemcpyAsync(dst.ptr, s.host, count * sizeof(float), cudaMemcpyHostToDevice,
                        compute_),
        "cudaMemcpyAsync");
  s.copied = syncEvents_.record(compute_);
}

const Buffer &CudaBackend::input(int step, int microbatch) {
  stage(*input_, block_, [&](float *x) { makeInput(config_.data, step, microbatch, x); });
  return *input_;
}

void CudaBackend::forward(int, const Buffer &params, const Buffer &in, Buffer &out) {
  computeBegin({&params, &in, &out});
  mlp_->forward(dev(params).ptr, dev(in).ptr, dev(out).ptr);
  computeEnd({&params, &in, &out});
}

void CudaBackend::backward(int, const Buffer &params, const Buffer &in,
                           const Buffer &gradOut, Buffer *gradIn, Buffer *gradParams) {
  computeBegin({&params, &in, &gradOut, gradIn, gradParams});
  mlp_->backward(dev(params).ptr, dev(in).ptr, dev(gradOut).ptr,
                 gradIn ? dev(*gradIn).ptr : nullptr,
                 gradParams ? dev(*gradParams).ptr : nullptr);
  computeEnd({&params, &in, &gradOut, gradIn, gradParams});
}

void CudaBackend::addLoss(int step, int microbatch, const Buffer &y) {
  const DataSpec &d = config_.data;
  const bool ce = d.loss == LossKind::CrossEntropy;
  stage(*targets_, ce ? size_t(d.rows) : block_,
        [&](float *t) { makeTargets(d, step, microbatch, t); });
  if (losses_ >= lossCapacity_)
    throw std::runtime_error("more sink-stage forwards in a step than sinks x microbatches");
  computeBegin({&y});
  check(cuda::loss(ce, dev(y).ptr, targets_->ptr, d.rows, d.hidden, rowLoss_,
                   lossSlots_ + losses_++, compute_),
        "loss kernel");
  computeEnd({&y});
}

void CudaBackend::lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) {
  const DataSpec &d = config_.data;
  const bool ce = d.loss == LossKind::CrossEntropy;
  stage(*targets_, ce ? size_t(d.rows) : block_,
        [&](float *t) { makeTargets(d, step, microbatch, t); });
  // As data.cpp: dloss_b/dy / B.
  const float scale = ce ? 1.0f / (float(d.rows) * float(d.microbatches))
                         : 1.0f / (float(d.rows * d.hidden) * float(d.microbatches));
  computeBegin({&y, &grad});
  check(cuda::lossGrad(ce, dev(y).ptr, targets_->ptr, d.rows, d.hidden, scale,
                       dev(grad).ptr, compute_),
        "loss gradient kernel");
  computeEnd({&y, &grad});
}

void CudaBackend::optimizerStep(int stage, Buffer &params, Buffer &grad) {
  const OptimizerConfig &o = config_.optimizer;
  const int64_t n = int64_t(params.size());
  computeBegin({&params, &grad});
  const int64_t t = ++applied_[stage];
  if (o.kind == OptimizerKind::Sgd) {
    check(sgd(dev(params).ptr, dev(grad).ptr, o.lr, n, compute_), "sgd kernel");
  } else {
    BufferPtr &m = moments_[2 * size_t(stage)], &v = moments_[2 * size_t(stage) + 1];
    if (!m) {
      m = pool_->get(params.size());
      v = pool_->get(params.size());
      zero(*m);
      zero(*v);
    }
    // Bias corrections as optimizer.cpp: in double, rounded to float.
    const float correct1 = float(1.0 - std::pow(double(o.beta1), double(t)));
    const float correct2 = float(1.0 - std::pow(double(o.beta2), double(t)));
    check(adam(dev(params).ptr, dev(grad).ptr, dev(*m).ptr, dev(*v).ptr, o.lr, o.beta1,
               o.beta2, o.eps, correct1, correct2, n, compute_),
          "adam kernel");
  }
  check(cudaMemsetAsync(dev(grad).ptr, 0, grad.bytes(), compute_), "cudaMemsetAsync");
  computeEnd({&params, &grad});
}

bool CudaBackend::enqueued(ncclComm_t comm, ncclResult_t issued) {
  ncclResult_t r = issued;
  if (r == ncclInProgress) {
    if (!tracker_->wait([comm] { return NcclComms::state(comm) != ncclInProgress; },
                        stall_))
      return fail();
    r = NcclComms::state(comm);
  }
  if (r == ncclSuccess)
    return true;
  stall_ = Stall{tracker_->currentOp(), {}, NcclComms::message(r, comm)};
  return fail();
}

// A group: ncclGroupStart, the sends and receives in program order (NCCL
// matches them per pair of ranks in that order), ncclGroupEnd.
bool CudaBackend::transfer(const Transfer *transfers, size_t count) {
  for (size_t i = 0; i < count; ++i)
    waitFor(comm_, *transfers[i].buffer);
  tracker_->started();
  const ncclComm_t world = nccl_->world();
  ncclResult_t first = ncclGroupStart();
  for (size_t i = 0; i < count; ++i) {
    const Transfer &t = transfers[i];
    float *p = dev(*t.buffer).ptr;
    ncclResult_t r = t.outgoing
                         ? ncclSend(p, t.buffer->size(), ncclFloat, t.peer, world, comm_)
                         : ncclRecv(p, t.buffer->size(), ncclFloat, t.peer, world, comm_);
    if (first == ncclSuccess)
      first = r;
  }
  ncclResult_t end = ncclGroupEnd(); // always closes the group
  if (!enqueued(world, first != ncclSuccess ? first : end))
    return false;
  commEnd(transfers, count, nullptr);
  return true;
}

bool CudaBackend::allreduce(Buffer &grad, int group) {
  ncclComm_t comm = nccl_->group(group);
  if (!comm) // a group of one: the sum is the buffer itself
    return true;
  waitFor(comm_, grad);
  tracker_->started();
  float *p = dev(grad).ptr;
  if (!enqueued(comm, ncclAllReduce(p, p, grad.size(), ncclFloat, ncclSum, comm, comm_)))
    return false;
  commEnd(nullptr, 0, &grad);
  return true;
}

bool CudaBackend::reduce(Buffer &grad, int root, int group) {
  ncclComm_t comm = nccl_->group(group);
  if (!comm)
    return true;
  const std::vector<int> &members = program_.groups[group];
  const int groupRoot =
      int(std::lower_bound(members.begin(), members.end(), root) - members.begin());
  waitFor(comm_, grad);
  tracker_->started();
  float *p = dev(grad).ptr;
  if (!enqueued(comm, ncclReduce(p, p, grad.size(), ncclFloat, ncclSum, groupRoot, comm,
                                 comm_)))
    return false;
  commEnd(nullptr, 0, &grad);
  return true;
}

// The losses were written in call order; summed in that order, as the CPU
// backend adds them.
bool CudaBackend::finishStep(double &lossSum) {
  if (!tracker_->drain(stall_))
    return fail();
  std::vector<double> losses(static_cast<size_t>(losses_));
  if (losses_ > 0)
    check(cudaMemcpy(losses.data(), lossSlots_, losses.size() * sizeof(double),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
  lossSum = 0;
  for (double l : losses)
    lossSum += l;
  return true;
}

} // namespace
} // namespace cuda

std::unique_ptr<Backend> makeCudaBackend(MPI_Comm world,
                                         const CudaBackendConfig &config) {
  return std::make_unique<cuda::CudaBackend>(world, config);
}

} // namespace pipesched::runtime
