#include "exec/cpu_backend.h"

#include "exec/host_link_probe.h"
#include "model/bppsa_exec.h"
#include "model/kernels.h"

#include <algorithm>
#include <cstring>

namespace pipesched::runtime {

CpuBackend::CpuBackend(Model &model, Transport &transport, const DataSpec &data,
                       const OptimizerConfig &optimizer)
    : model_(model), transport_(transport), data_(data), optimizer_(optimizer),
      states_(size_t(model.shape().stages)), input_(size_t(data.rows * data.hidden)) {}

BufferPtr CpuBackend::allocate(size_t n) { return std::make_unique<HostBuffer>(n); }

void CpuBackend::zero(Buffer &b) { std::fill_n(hostData(b), b.size(), 0.0f); }

void CpuBackend::upload(Buffer &dst, const float *host) {
  std::memcpy(hostData(dst), host, dst.bytes());
}

void CpuBackend::download(const Buffer &src, float *host) {
  std::memcpy(host, hostData(src), src.bytes());
}

void CpuBackend::copy(Buffer &dst, const Buffer &src) {
  std::memcpy(hostData(dst), hostData(src), dst.bytes());
}

void CpuBackend::add(Buffer &acc, const Buffer &x) {
  kernels::add(hostData(acc), hostData(x), int64_t(acc.size()));
}

void CpuBackend::copyRange(Buffer &dst, size_t dstOffset, const Buffer &src,
                           size_t srcOffset, size_t n) {
  std::memcpy(hostData(dst) + dstOffset, hostData(src) + srcOffset, n * sizeof(float));
}

void CpuBackend::addRange(Buffer &acc, size_t accOffset, const Buffer &x, size_t xOffset,
                          size_t n) {
  kernels::add(hostData(acc) + accOffset, hostData(x) + xOffset, int64_t(n));
}

const Buffer &CpuBackend::input(int step, int microbatch) {
  makeInput(data_, step, microbatch, input_.data.data());
  return input_;
}

void CpuBackend::forward(int stage, const Buffer &params, const Buffer &in, Buffer &out) {
  model_.forward(stage, hostData(params), data_.rows, hostData(in), hostData(out));
}

void CpuBackend::backward(int stage, const Buffer &params, const Buffer &in,
                          const Buffer &gradOut, Buffer *gradIn, Buffer *gradParams) {
  model_.backward(stage, hostData(params), data_.rows, hostData(in), hostData(gradOut),
                  gradIn ? hostData(*gradIn) : nullptr,
                  gradParams ? hostData(*gradParams) : nullptr);
}

void CpuBackend::jacobian(int stage, const Buffer &params, const Buffer &in,
                          bppsa::Storage storage, Buffer &out) {
  model_.jacobian(stage, hostData(params), data_.rows, hostData(in), storage,
                  hostData(out));
}

void CpuBackend::combine(bool vector, const Buffer &lhs, const Buffer &rhs,
                         bppsa::Storage storage, Buffer &out) {
  bppsa::combine(vector ? bppsa::Value::Vector : bppsa::Value::Jacobian, hostData(lhs),
                 hostData(rhs), storage, data_.rows, data_.hidden, hostData(out));
}

void CpuBackend::addLoss(int step, int microbatch, const Buffer &y) {
  lossSum_ += lossAndGrad(data_, step, microbatch, hostData(y), nullptr);
}

void CpuBackend::lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) {
  lossAndGrad(data_, step, microbatch, hostData(y), hostData(grad));
}

void CpuBackend::optimizerStep(int stage, Buffer &params, Buffer &grad) {
  applyOptimizer(optimizer_, states_[stage], hostData(params), hostData(grad),
                 params.size());
  zero(grad);
}

bool CpuBackend::stalled(std::vector<size_t> pending) {
  stall_ = Stall{op_, std::move(pending), ""};
  return false;
}

bool CpuBackend::transfer(const Transfer *transfers, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Transfer &t = transfers[i];
    if (t.outgoing)
      transport_.postSend(hostData(*t.buffer), t.buffer->size(), t.peer, t.tag);
    else
      transport_.postRecv(hostData(*t.buffer), t.buffer->size(), t.peer, t.tag);
  }
  std::vector<size_t> pending;
  return transport_.waitPosted(pending) || stalled(std::move(pending));
}

bool CpuBackend::allreduce(Buffer &grad, int group) {
  return transport_.allreduce(hostData(grad), grad.size(), group) || stalled({});
}

bool CpuBackend::reduce(Buffer &grad, int root, int group) {
  return transport_.reduce(hostData(grad), grad.size(), root, group) || stalled({});
}

bool CpuBackend::finishStep(double &lossSum) {
  lossSum = lossSum_;
  lossSum_ = 0;
  return true;
}

std::unique_ptr<LinkProbe> CpuBackend::linkProbe() {
  return makeHostLinkProbe(transport_.world(), transport_.rank(), transport_.timeout());
}

} // namespace pipesched::runtime
