// The CUDA backend (cuda_backend.h). Two streams per rank: compute (cuBLAS
// and kernels) and communication (device_comm.h: NCCL, or MPI through pinned
// host memory), the latter at the higher priority. The host queues each op
// on its stream and moves on; the buffers' events (cuda_memory.h) order the
// streams: a compute op waits for the receives it reads, a send for the
// compute that produced its tensor. Waits, timeouts and the bound on queued
// commands: the OpTracker (cuda_tracker.h). Every call reserves room for the
// commands it queues before it queues them.
#include "cuda/cuda_backend.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_kernels.h"
#include "cuda/cuda_memory.h"
#include "cuda/cuda_mlp.h"
#include "cuda/cuda_tracker.h"
#include "cuda/cuda_warmup.h"
#include "cuda/device_comm.h"
#include "cuda/device_link_probe.h"
#include "cuda/pinned_pool.h"
#include "model/data_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <stdexcept>

namespace pipesched::runtime {
namespace cuda {
namespace {

// Commands of the stream ordering around a call: at most one event wait per
// buffer it touches, and one event record after its work.
constexpr size_t kRecordCommands = 1;
size_t ordered(size_t buffers, size_t work) { return buffers + work + kRecordCommands; }
// New device memory: cudaMallocAsync and the event that orders it.
constexpr size_t kAllocateCommands = 2;
// The kernel that generates a microbatch's inputs or targets.
constexpr size_t kGenerateCommands = 1;

class CudaBackend final : public Backend {
public:
  // Keeps the configuration only: start() does what can fail.
  CudaBackend(MPI_Comm world, const CudaBackendConfig &config);
  ~CudaBackend() override;

  void start() override;

  BufferPtr allocate(size_t n) override;
  void zero(Buffer &b) override;
  void upload(Buffer &dst, const float *host) override;
  void download(const Buffer &src, float *host) override;
  void copy(Buffer &dst, const Buffer &src) override;
  void add(Buffer &acc, const Buffer &x) override;
  void copyRange(Buffer &dst, size_t dstOffset, const Buffer &src, size_t srcOffset,
                 size_t n) override;
  void addRange(Buffer &acc, size_t accOffset, const Buffer &x, size_t xOffset,
                size_t n) override;

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
  // Its DeviceComm between device buffers (device_link_probe.h).
  std::unique_ptr<LinkProbe> linkProbe() override {
    return makeDeviceLinkProbe(DeviceLinkContext{*comms_, *tracker_, *pool_, timingEvents_,
                                                 comm_, config_.rank, config_.timeout});
  }
  double timeout() const override { return config_.timeout; }
  void abort() override {
    if (comms_)
      comms_->abort();
  }

private:
  using Buffers = std::initializer_list<const Buffer *>; // nulls are skipped
  // Room for `commands` more in CUDA's queue; false (failed_ set) when the
  // wait for it gave up. After a false, a call queues nothing more.
  bool reserve(size_t commands);
  // Stream ordering: wait for the other stream's last use of each buffer,
  // then (after the work) record this stream's.
  void waitFor(cudaStream_t stream, const Buffer &b);
  void computeBegin(Buffers buffers);
  void computeEnd(Buffers buffers);
  void commEnd(const Transfer *transfers, size_t count, Buffer *single);
  bool collective(Buffer &grad, int group,
                  const std::function<bool(DeviceComm &, Stall &)> &run);
  // Queues the generation of (step, microbatch)'s targets into targets_.
  void generateTargets(int step, int microbatch);
  bool fail() {
    failed_ = true;
    return false;
  }

  MPI_Comm world_;
  CudaBackendConfig config_;
  const Program &program_;
  size_t block_;
  cudaStream_t compute_ = nullptr, comm_ = nullptr;
  EventPool syncEvents_{false}, timingEvents_{true};
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PinnedPool> pinned_;
  std::unique_ptr<CudaMlp> mlp_;
  std::unique_ptr<OpTracker> tracker_;
  std::unique_ptr<DeviceComm> comms_;
  std::unique_ptr<DeviceBuffer> input_, targets_;
  double *rowLoss_ = nullptr, *lossSlots_ = nullptr;
  int losses_ = 0, lossCapacity_;
  std::vector<BufferPtr> moments_; // Adam: m of stage s at 2s, v at 2s + 1
  std::vector<int64_t> applied_;   // optimizer steps per stage
};

CudaBackend::CudaBackend(MPI_Comm world, const CudaBackendConfig &c)
    : world_(world), config_(c), program_(*c.program),
      block_(size_t(c.data.rows * c.data.hidden)),
      // One loss per sink stage and microbatch.
      lossCapacity_(std::max(1, c.data.microbatches * c.program->graph.sinks())) {}

// Collective over world_ (NCCL's bootstrap). The driver calls it inside the
// job's abort scope: an error here ends the job at once (abortJob aborts
// the communicators made so far), before unwinding could reach the
// destructors of what is set up, NCCL's tear-down waiting for the peers.
void CudaBackend::start() {
  const CudaBackendConfig &c = config_;
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
  pinned_ = std::make_unique<PinnedPool>();
  // One layer count for every stage (main refuses a program whose stages
  // differ): --layers-per-stage, or the program's uniform `layers`.
  mlp_ = std::make_unique<CudaMlp>(c.shape.hidden, c.shape.layersOf(0), c.data.rows, compute_);
  tracker_ = std::make_unique<OpTracker>(compute_, comm_, timingEvents_, c.timeout, [this] {
    return comms_ ? comms_->asyncError() : std::string();
  });

  // Before any transfer can occupy the GPU: load every kernel and GEMM shape.
  const size_t stageParams =
      size_t(c.shape.layersOf(0)) * size_t(c.shape.hidden * c.shape.hidden + c.shape.hidden);
  warmUp(*mlp_, c.data.rows, c.data.hidden, stageParams, compute_, c.setupTimeout);

  const DeviceCommContext context{program_, c.rank, comm_, syncEvents_, *tracker_};
  if (c.comm == GpuComm::Nccl) {
    comms_ = makeNcclComm(world_, context, c.setupTimeout);
  } else {
    if (!c.transport)
      throw std::logic_error("--gpu-comm mpi without an MPI transport");
    comms_ = makeMpiComm(*c.transport, *pinned_, context);
  }

  input_ = pool_->get(block_);
  targets_ = pool_->get(block_);
  check(cudaMalloc(reinterpret_cast<void **>(&rowLoss_),
                   size_t(c.data.rows) * sizeof(double)),
        "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void **>(&lossSlots_),
                   size_t(lossCapacity_) * sizeof(double)),
        "cudaMalloc");
  moments_.resize(2 * size_t(program_.stages));
  applied_.assign(size_t(program_.stages), 0);
  check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
  if (c.rank == 0) { // what ran, for the logs of GPU checks
    std::printf("backend cuda: rank 0 on %s; transfers: %s\n",
                describeDevice(c.device).c_str(), comms_->describe().c_str());
    std::fflush(stdout);
  }
}

// Buffers go back to their pools before those free the memory, events to
// their pools before those go; communicators are finalized with the device
// idle. (A backend whose start() failed is never destroyed: the job ended.)
CudaBackend::~CudaBackend() {
  if (comm_)
    cudaStreamSynchronize(comm_);
  if (compute_)
    cudaStreamSynchronize(compute_);
  moments_.clear();
  input_.reset();
  targets_.reset();
  comms_.reset();
  tracker_.reset();
  mlp_.reset();
  pool_.reset();
  pinned_.reset();
  cudaFree(rowLoss_);
  cudaFree(lossSlots_);
  if (comm_)
    cudaStreamDestroy(comm_);
  if (compute_)
    cudaStreamDestroy(compute_);
}

bool CudaBackend::reserve(size_t commands) {
  return !failed_ && (tracker_->reserve(commands, stall_) || fail());
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
  tracker_->started(false);
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

// The pool queues commands only for new memory; counted always. After a
// failed reservation the memory still comes (the executor needs a buffer
// and ends the job at once): a bounded excess over the queue's bound.
BufferPtr CudaBackend::allocate(size_t n) {
  reserve(kAllocateCommands);
  return pool_->get(n);
}

void CudaBackend::zero(Buffer &b) {
  if (!reserve(ordered(1, 1)))
    return;
  computeBegin({&b}); // may be an op's first work (tied_grad's sum)
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
  if (!reserve(ordered(2, 1)))
    return;
  computeBegin({&dst, &src});
  check(cudaMemcpyAsync(dev(dst).ptr, dev(src).ptr, dst.bytes(), cudaMemcpyDeviceToDevice,
                        compute_),
        "cudaMemcpyAsync");
  computeEnd({&dst, &src});
}

void CudaBackend::add(Buffer &acc, const Buffer &x) {
  if (!reserve(ordered(2, 1)))
    return;
  computeBegin({&acc, &x});
  check(cuda::add(dev(acc).ptr, dev(x).ptr, int64_t(acc.size()), compute_), "add kernel");
  computeEnd({&acc, &x});
}

void CudaBackend::copyRange(Buffer &dst, size_t dstOffset, const Buffer &src,
                            size_t srcOffset, size_t n) {
  if (!reserve(ordered(2, 1)))
    return;
  computeBegin({&dst, &src});
  check(cudaMemcpyAsync(dev(dst).ptr + dstOffset, dev(src).ptr + srcOffset,
                        n * sizeof(float), cudaMemcpyDeviceToDevice, compute_),
        "cudaMemcpyAsync");
  computeEnd({&dst, &src});
}

void CudaBackend::addRange(Buffer &acc, size_t accOffset, const Buffer &x, size_t xOffset,
                           size_t n) {
  if (!reserve(ordered(2, 1)))
    return;
  computeBegin({&acc, &x});
  check(cuda::add(dev(acc).ptr + accOffset, dev(x).ptr + xOffset, int64_t(n), compute_),
        "add kernel");
  computeEnd({&acc, &x});
}

void CudaBackend::beginStep(int) {
  tracker_->beginStep();
  losses_ = 0;
}

void CudaBackend::beginOp(size_t index, bool communication) {
  if (!tracker_->beginOp(index, communication, stall_))
    failed_ = true;
}

// Data are generated on the device by the host's counter-based generator
// (data_gen.h, bit for bit), so that no step waits for the host to draw
// them; only the compute stream touches input_ and targets_, so its order
// suffices. Part of the op that asks for them (its start is before).
const Buffer &CudaBackend::input(int step, int microbatch) {
  if (!reserve(kGenerateCommands))
    return *input_;
  tracker_->started(false);
  check(generateInput(datagen::key(config_.data.seed, step, microbatch), input_->ptr,
                      int64_t(block_), compute_),
        "input kernel");
  return *input_;
}

void CudaBackend::generateTargets(int step, int microbatch) {
  const DataSpec &d = config_.data;
  check(cuda::generateTargets(d.loss == LossKind::CrossEntropy,
                              datagen::key(d.seed, step, microbatch), targets_->ptr, d.rows,
                              d.hidden, compute_),
        "targets kernel");
}

void CudaBackend::forward(int, const Buffer &params, const Buffer &in, Buffer &out) {
  if (!reserve(ordered(3, mlp_->forwardCommands())))
    return;
  computeBegin({&params, &in, &out});
  mlp_->forward(dev(params).ptr, dev(in).ptr, dev(out).ptr);
  computeEnd({&params, &in, &out});
}

void CudaBackend::backward(int, const Buffer &params, const Buffer &in,
                           const Buffer &gradOut, Buffer *gradIn, Buffer *gradParams) {
  if (!reserve(ordered(5, mlp_->backwardCommands(gradIn, gradParams))))
    return;
  computeBegin({&params, &in, &gradOut, gradIn, gradParams});
  mlp_->backward(dev(params).ptr, dev(in).ptr, dev(gradOut).ptr,
                 gradIn ? dev(*gradIn).ptr : nullptr,
                 gradParams ? dev(*gradParams).ptr : nullptr);
  computeEnd({&params, &in, &gradOut, gradIn, gradParams});
}

void CudaBackend::addLoss(int step, int microbatch, const Buffer &y) {
  const DataSpec &d = config_.data;
  const bool ce = d.loss == LossKind::CrossEntropy;
  // The targets, the rows' losses, then their sum.
  if (!reserve(ordered(1, kGenerateCommands + 2)))
    return;
  if (losses_ >= lossCapacity_)
    throw std::runtime_error("more sink-stage forwards in a step than sinks x microbatches");
  computeBegin({&y});
  generateTargets(step, microbatch);
  check(cuda::loss(ce, dev(y).ptr, targets_->ptr, d.rows, d.hidden, rowLoss_,
                   lossSlots_ + losses_++, compute_),
        "loss kernel");
  computeEnd({&y});
}

void CudaBackend::lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) {
  const DataSpec &d = config_.data;
  const bool ce = d.loss == LossKind::CrossEntropy;
  if (!reserve(ordered(2, kGenerateCommands + 1)))
    return;
  // As data.cpp: dloss_b/dy / B.
  const float scale = ce ? 1.0f / (float(d.rows) * float(d.microbatches))
                         : 1.0f / (float(d.rows * d.hidden) * float(d.microbatches));
  computeBegin({&y, &grad});
  generateTargets(step, microbatch);
  check(cuda::lossGrad(ce, dev(y).ptr, targets_->ptr, d.rows, d.hidden, scale,
                       dev(grad).ptr, compute_),
        "loss gradient kernel");
  computeEnd({&y, &grad});
}

void CudaBackend::optimizerStep(int stage, Buffer &params, Buffer &grad) {
  const OptimizerConfig &o = config_.optimizer;
  const int64_t n = int64_t(params.size());
  BufferPtr &m = moments_[2 * size_t(stage)], &v = moments_[2 * size_t(stage) + 1];
  if (o.kind == OptimizerKind::Adam && !m) {
    m = allocate(params.size());
    v = allocate(params.size());
    zero(*m);
    zero(*v);
  }
  // The update, then the gradient's memset.
  if (!reserve(ordered(o.kind == OptimizerKind::Adam ? 4 : 2, 2)))
    return;
  const Buffer *moment1 = m.get(), *moment2 = v.get();
  computeBegin({&params, &grad, moment1, moment2});
  const int64_t t = ++applied_[stage];
  if (o.kind == OptimizerKind::Sgd) {
    check(sgd(dev(params).ptr, dev(grad).ptr, o.lr, n, compute_), "sgd kernel");
  } else {
    // Bias corrections as optimizer.cpp: in double, rounded to float.
    const float correct1 = float(1.0 - std::pow(double(o.beta1), double(t)));
    const float correct2 = float(1.0 - std::pow(double(o.beta2), double(t)));
    check(adam(dev(params).ptr, dev(grad).ptr, dev(*m).ptr, dev(*v).ptr, o.lr, o.beta1,
               o.beta2, o.eps, correct1, correct2, n, compute_),
          "adam kernel");
  }
  check(cudaMemsetAsync(dev(grad).ptr, 0, grad.bytes(), compute_), "cudaMemsetAsync");
  computeEnd({&params, &grad, moment1, moment2});
}

bool CudaBackend::transfer(const Transfer *transfers, size_t count) {
  if (!reserve(count + comms_->transferCommands(count) + kRecordCommands))
    return false;
  for (size_t i = 0; i < count; ++i)
    waitFor(comm_, *transfers[i].buffer);
  tracker_->started(true);
  if (!comms_->transfer(transfers, count, stall_))
    return fail();
  commEnd(transfers, count, nullptr);
  return true;
}

// A group of one has nothing to sum.
bool CudaBackend::collective(Buffer &grad, int group,
                             const std::function<bool(DeviceComm &, Stall &)> &run) {
  if (program_.groups[size_t(group)].size() < 2)
    return true;
  if (!reserve(1 + comms_->collectiveCommands() + kRecordCommands))
    return false;
  waitFor(comm_, grad);
  tracker_->started(true);
  if (!run(*comms_, stall_))
    return fail();
  commEnd(nullptr, 0, &grad);
  return true;
}

bool CudaBackend::allreduce(Buffer &grad, int group) {
  return collective(grad, group, [&](DeviceComm &c, Stall &s) {
    return c.allreduce(grad, group, s);
  });
}

bool CudaBackend::reduce(Buffer &grad, int root, int group) {
  return collective(grad, group, [&](DeviceComm &c, Stall &s) {
    return c.reduce(grad, root, group, s);
  });
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
