// --gpu-comm mpi (device_comm.h): transfers and collectives staged through
// pinned host memory over the MPI transport of the CPU backend, so that
// several ranks can share one GPU (NCCL refuses two ranks of a communicator
// on one device). Each call completes before it returns, as on the CPU:
// device to host copies on the communication stream, a host wait for them,
// MPI with --timeout, host to device copies queued behind.
#include "cuda/cuda_check.h"
#include "cuda/device_comm.h"

#include <functional>
#include <vector>

namespace pipesched::runtime::cuda {
namespace {

class MpiDeviceComm final : public DeviceComm {
public:
  MpiDeviceComm(Transport &transport, PinnedPool &pinned, const DeviceCommContext &c)
      : transport_(transport), pinned_(pinned), c_(c) {}

  // A copy per transfer, and an event after the outgoing and after the
  // incoming ones.
  size_t transferCommands(size_t count) const override { return count + 2; }
  // Down, an event, up, an event.
  size_t collectiveCommands() const override { return 4; }

  bool transfer(const Transfer *transfers, size_t count, Stall &stall) override;
  bool allreduce(Buffer &grad, int group, Stall &stall) override;
  bool reduce(Buffer &grad, int root, int group, Stall &stall) override;
  bool allreduceAll(Buffer &data, Stall &stall) override;
  std::string describe() const override { return "MPI through pinned host memory"; }

private:
  // Leases a staging block for `b` that no queued copy uses any more.
  bool lease(const Buffer &b, PinnedLease &out, Stall &stall);
  // Queues device -> host copies of `from` into `to` and waits for them.
  bool download(const std::vector<const Buffer *> &from, std::vector<PinnedLease *> &to,
                Stall &stall);
  // Queues host -> device copies; the leases are free once they finish.
  void upload(const std::vector<Buffer *> &to, std::vector<PinnedLease *> &from);
  bool stalled(Stall &stall, std::vector<size_t> pending) {
    stall = Stall{c_.tracker.currentOp(), std::move(pending), ""};
    return false;
  }
  bool collective(Buffer &grad, bool back, Stall &stall,
                  const std::function<bool(float *)> &reduce);

  Transport &transport_;
  PinnedPool &pinned_;
  DeviceCommContext c_;
};

bool MpiDeviceComm::lease(const Buffer &b, PinnedLease &out, Stall &stall) {
  out = pinned_.get(b.size());
  if (out.lastUse && !c_.tracker.wait(out.lastUse.get(), stall))
    return false;
  out.lastUse.reset();
  return true;
}

bool MpiDeviceComm::download(const std::vector<const Buffer *> &from,
                             std::vector<PinnedLease *> &to, Stall &stall) {
  if (from.empty())
    return true;
  for (size_t i = 0; i < from.size(); ++i)
    check(cudaMemcpyAsync(to[i]->host, dev(*from[i]).ptr, from[i]->bytes(),
                          cudaMemcpyDeviceToHost, c_.stream),
          "cudaMemcpyAsync");
  EventRef copied = c_.events.record(c_.stream);
  return c_.tracker.wait(copied.get(), stall);
}

void MpiDeviceComm::upload(const std::vector<Buffer *> &to,
                           std::vector<PinnedLease *> &from) {
  if (to.empty())
    return;
  for (size_t i = 0; i < to.size(); ++i)
    check(cudaMemcpyAsync(dev(*to[i]).ptr, from[i]->host, to[i]->bytes(),
                          cudaMemcpyHostToDevice, c_.stream),
          "cudaMemcpyAsync");
  EventRef copied = c_.events.record(c_.stream);
  for (PinnedLease *l : from)
    l->lastUse = copied;
}

// Every send's data comes down before anything is posted; the sends and
// receives are posted in program order (MPI matches them by peer and tag)
// and waited for together, as on the CPU.
bool MpiDeviceComm::transfer(const Transfer *transfers, size_t count, Stall &stall) {
  std::vector<PinnedLease> host(count);
  std::vector<const Buffer *> outgoing;
  std::vector<Buffer *> incoming;
  std::vector<PinnedLease *> down, up;
  for (size_t i = 0; i < count; ++i) {
    if (!lease(*transfers[i].buffer, host[i], stall))
      return false;
    if (transfers[i].outgoing) {
      outgoing.push_back(transfers[i].buffer);
      down.push_back(&host[i]);
    } else {
      incoming.push_back(transfers[i].buffer);
      up.push_back(&host[i]);
    }
  }
  if (!download(outgoing, down, stall))
    return false;
  for (size_t i = 0; i < count; ++i) {
    const Transfer &t = transfers[i];
    if (t.outgoing)
      transport_.postSend(host[i].host, host[i].n, t.peer, t.tag);
    else
      transport_.postRecv(host[i].host, host[i].n, t.peer, t.tag);
  }
  std::vector<size_t> pending;
  if (!transport_.waitPosted(pending))
    return stalled(stall, std::move(pending));
  upload(incoming, up);
  return true;
}

// Down, reduce on the host with MPI, and (where the result lands) up again.
bool MpiDeviceComm::collective(Buffer &grad, bool back, Stall &stall,
                               const std::function<bool(float *)> &reduce) {
  PinnedLease host;
  std::vector<PinnedLease *> leases{&host};
  if (!lease(grad, host, stall) || !download({&grad}, leases, stall))
    return false;
  if (!reduce(host.host))
    return stalled(stall, {});
  if (back)
    upload({&grad}, leases);
  return true;
}

bool MpiDeviceComm::allreduce(Buffer &grad, int group, Stall &stall) {
  return collective(grad, true, stall, [&](float *host) {
    return transport_.allreduce(host, grad.size(), group);
  });
}

bool MpiDeviceComm::reduce(Buffer &grad, int root, int group, Stall &stall) {
  return collective(grad, c_.rank == root, stall, [&](float *host) {
    return transport_.reduce(host, grad.size(), root, group);
  });
}

bool MpiDeviceComm::allreduceAll(Buffer &data, Stall &stall) {
  return collective(data, true, stall, [&](float *host) {
    return transport_.allreduceAll(host, data.size());
  });
}

} // namespace

std::unique_ptr<DeviceComm> makeMpiComm(Transport &transport, PinnedPool &pinned,
                                        const DeviceCommContext &context) {
  return std::make_unique<MpiDeviceComm>(transport, pinned, context);
}

} // namespace pipesched::runtime::cuda
