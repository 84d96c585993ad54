// The CPU backend: host memory, the Model's stage functions (built-in or a
// model library), the data and optimizer of data.h / optimizer.h, and the
// MPI Transport. Every call completes before it returns, so a transfer's
// wait is where a timeout shows.
#pragma once

#include "comm/transport.h"
#include "exec/backend.h"
#include "model/data.h"
#include "model/model.h"
#include "model/optimizer.h"

#include <vector>

namespace pipesched::runtime {

class CpuBackend final : public Backend {
public:
  CpuBackend(Model &model, Transport &transport, const DataSpec &data,
             const OptimizerConfig &optimizer);

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

  void beginOp(size_t index, bool) override { op_ = index; }

  const Buffer &input(int step, int microbatch) override;
  void forward(int stage, const Buffer &params, const Buffer &in, Buffer &out) override;
  void backward(int stage, const Buffer &params, const Buffer &in, const Buffer &gradOut,
                Buffer *gradIn, Buffer *gradParams) override;
  void jacobian(int stage, const Buffer &params, const Buffer &in,
                bppsa::Storage storage, Buffer &out) override;
  void combine(bool vector, const Buffer &lhs, const Buffer &rhs,
               bppsa::Storage storage, Buffer &out) override;
  void addLoss(int step, int microbatch, const Buffer &y) override;
  void lossGrad(int step, int microbatch, const Buffer &y, Buffer &grad) override;
  void optimizerStep(int stage, Buffer &params, Buffer &grad) override;

  bool transfer(const Transfer *transfers, size_t count) override;
  bool allreduce(Buffer &grad, int group) override;
  bool reduce(Buffer &grad, int root, int group) override;

  bool finishStep(double &lossSum) override;
  // Host MPI, as this backend's transfers.
  std::unique_ptr<LinkProbe> linkProbe() override;
  double timeout() const override { return transport_.timeout(); }

private:
  bool stalled(std::vector<size_t> pending);

  Model &model_;
  Transport &transport_;
  DataSpec data_;
  OptimizerConfig optimizer_;
  std::vector<OptimizerState> states_; // per stage
  HostBuffer input_;
  double lossSum_ = 0;
  size_t op_ = 0;
};

} // namespace pipesched::runtime
