// --gpu-comm nccl (device_comm.h): transfers and collectives as NCCL calls
// on the communication stream.
#include "cuda/device_comm.h"
#include "cuda/nccl_comms.h"

#include <algorithm>
#include <stdexcept>

namespace pipesched::runtime::cuda {
namespace {

// NCCL queues a kernel per group or collective and may order its internal
// streams with event records and waits: counted generously per call.
constexpr size_t kCommandsPerNcclCall = 2;
constexpr size_t kCommandsPerNcclLaunch = 4;

class NcclDeviceComm final : public DeviceComm {
public:
  NcclDeviceComm(MPI_Comm world, const DeviceCommContext &c, double setupSeconds)
      : c_(c), comms_(world, c.program, c.rank, setupSeconds) {}

  size_t transferCommands(size_t count) const override {
    return kCommandsPerNcclLaunch + kCommandsPerNcclCall * count;
  }
  size_t collectiveCommands() const override {
    return kCommandsPerNcclLaunch + kCommandsPerNcclCall;
  }

  bool transfer(const Transfer *transfers, size_t count, Stall &stall) override;
  bool allreduce(Buffer &grad, int group, Stall &stall) override;
  bool reduce(Buffer &grad, int root, int group, Stall &stall) override;
  bool allreduceAll(Buffer &data, Stall &stall) override;

  std::string asyncError() const override { return comms_.asyncError(); }
  void abort() override { comms_.abort(); }
  std::string describe() const override {
    int v = 0;
    std::string nccl = "NCCL (version unknown)";
    if (ncclGetVersion(&v) == ncclSuccess)
      nccl = "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) +
             "." + std::to_string(v % 100);
    return comms_.world() ? nccl : nccl + ", no communicator (one rank)";
  }

private:
  bool enqueued(ncclComm_t comm, ncclResult_t issued, Stall &stall);

  DeviceCommContext c_;
  NcclComms comms_;
};

// A non-blocking communicator may return ncclInProgress while it still
// enqueues the work on the stream: only then does the host wait (the
// backend records the stream's event after this, which must follow NCCL's
// work). Asynchronous errors are checked by every tracker wait.
bool NcclDeviceComm::enqueued(ncclComm_t comm, ncclResult_t issued, Stall &stall) {
  ncclResult_t r = issued;
  if (r == ncclInProgress) {
    if (!c_.tracker.wait([comm] { return NcclComms::state(comm) != ncclInProgress; },
                         stall))
      return false;
    r = NcclComms::state(comm);
  }
  if (r == ncclSuccess)
    return true;
  stall = Stall{c_.tracker.currentOp(), {}, NcclComms::message(r, comm)};
  return false;
}

// ncclGroupStart, the sends and receives in program order (NCCL matches
// them per pair of ranks in that order), ncclGroupEnd.
bool NcclDeviceComm::transfer(const Transfer *transfers, size_t count, Stall &stall) {
  const ncclComm_t world = comms_.world();
  if (!world)
    throw std::logic_error("a transfer in a world of one rank");
  ncclResult_t first = ncclGroupStart();
  for (size_t i = 0; i < count; ++i) {
    const Transfer &t = transfers[i];
    float *p = dev(*t.buffer).ptr;
    ncclResult_t r = t.outgoing
                         ? ncclSend(p, t.buffer->size(), ncclFloat, t.peer, world, c_.stream)
                         : ncclRecv(p, t.buffer->size(), ncclFloat, t.peer, world, c_.stream);
    if (first == ncclSuccess)
      first = r;
  }
  ncclResult_t end = ncclGroupEnd(); // always closes the group
  return enqueued(world, first != ncclSuccess ? first : end, stall);
}

bool NcclDeviceComm::allreduce(Buffer &grad, int group, Stall &stall) {
  ncclComm_t comm = comms_.group(group);
  if (!comm) // a group of one: the sum is the buffer itself
    return true;
  float *p = dev(grad).ptr;
  return enqueued(
      comm, ncclAllReduce(p, p, grad.size(), ncclFloat, ncclSum, comm, c_.stream), stall);
}

// On the world's communicator, which the transfers use.
bool NcclDeviceComm::allreduceAll(Buffer &data, Stall &stall) {
  const ncclComm_t world = comms_.world();
  if (!world)
    throw std::logic_error("an all-reduce over a world of one rank");
  float *p = dev(data).ptr;
  return enqueued(
      world, ncclAllReduce(p, p, data.size(), ncclFloat, ncclSum, world, c_.stream), stall);
}

bool NcclDeviceComm::reduce(Buffer &grad, int root, int group, Stall &stall) {
  ncclComm_t comm = comms_.group(group);
  if (!comm)
    return true;
  const std::vector<int> &members = c_.program.groups[group];
  const int groupRoot =
      int(std::lower_bound(members.begin(), members.end(), root) - members.begin());
  float *p = dev(grad).ptr;
  return enqueued(
      comm, ncclReduce(p, p, grad.size(), ncclFloat, ncclSum, groupRoot, comm, c_.stream),
      stall);
}

} // namespace

std::unique_ptr<DeviceComm> makeNcclComm(MPI_Comm world, const DeviceCommContext &context,
                                         double setupSeconds) {
  return std::make_unique<NcclDeviceComm>(world, context, setupSeconds);
}

} // namespace pipesched::runtime::cuda
