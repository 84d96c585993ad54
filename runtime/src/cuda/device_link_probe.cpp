#include "cuda/device_link_probe.h"

#include "comm/abort_job.h"
#include "cuda/cuda_check.h"

#include <functional>

namespace pipesched::runtime::cuda {
namespace {

// Nothing else is in flight after the steps (MPI matches by tag; NCCL
// ignores it).
constexpr int64_t kTag = 0;

class DeviceLinkProbe final : public LinkProbe {
public:
  explicit DeviceLinkProbe(const DeviceLinkContext &c) : c_(c) {}

  std::string path() const override {
    return "over " + c_.comm.describe() + " between device buffers";
  }

  double shift(int64_t bytes, int next, int previous) override {
    ready(out_, bytes);
    ready(in_, bytes);
    const Transfer ring[2] = {{false, in_.get(), previous, kTag},
                              {true, out_.get(), next, kTag}};
    return timed("--profile's ring of transfers",
                 [&](Stall &stall) { return c_.comm.transfer(ring, 2, stall); });
  }

  double allreduce(int64_t floats) override {
    ready(sum_, floats * int64_t(sizeof(float)));
    return timed("--profile's all-reduce",
                 [&](Stall &stall) { return c_.comm.allreduceAll(*sum_, stall); });
  }

private:
  void ready(std::unique_ptr<DeviceBuffer> &b, int64_t bytes);
  double timed(const char *what, const std::function<bool(Stall &)> &run);
  [[noreturn]] void gaveUp(const char *what, const Stall &stall) const;

  DeviceLinkContext c_;
  std::unique_ptr<DeviceBuffer> out_, in_, sum_;
};

// A zeroed buffer of `bytes` that the communication stream may use: its
// memory came from the pool on the compute stream, whose last use (the
// allocation, or a step's) it waits for. A buffer handed back needs no
// event: every use was waited for by the host.
void DeviceLinkProbe::ready(std::unique_ptr<DeviceBuffer> &b, int64_t bytes) {
  const size_t n = size_t(bytes) / sizeof(float);
  if (b && b->size() == n)
    return;
  b.reset();
  b = c_.pool.get(n);
  if (b->computeUse) {
    check(cudaStreamWaitEvent(c_.stream, b->computeUse.get(), 0), "cudaStreamWaitEvent");
    b->computeUse.reset();
  }
  check(cudaMemsetAsync(b->ptr, 0, b->bytes(), c_.stream), "cudaMemsetAsync");
}

// Device time between events on the communication stream around the work
// (NCCL's kernel; or the copies down, the host's MPI and the copies up),
// as the steps' ops are timed; the host waits for the end before the next
// round, so rounds do not overlap.
double DeviceLinkProbe::timed(const char *what, const std::function<bool(Stall &)> &run) {
  Stall stall;
  const EventRef start = c_.timing.record(c_.stream);
  if (!run(stall))
    gaveUp(what, stall);
  const EventRef end = c_.timing.record(c_.stream);
  if (!c_.tracker.wait(end.get(), stall))
    gaveUp(what, stall);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.get(), end.get()), "cudaEventElapsedTime");
  return double(ms) * 1e6;
}

// As waitOrAbort on the cpu backend; abortJob aborts the communicators.
void DeviceLinkProbe::gaveUp(const char *what, const Stall &stall) const {
  if (!stall.error.empty())
    abortJob(1, "pipeline-run: rank %d: %s in %s", c_.rank, stall.error.c_str(), what);
  abortJob(2, "pipeline-run: rank %d timed out after %.1f s in %s", c_.rank, c_.timeout,
           what);
}

} // namespace

std::unique_ptr<LinkProbe> makeDeviceLinkProbe(const DeviceLinkContext &context) {
  return std::make_unique<DeviceLinkProbe>(context);
}

} // namespace pipesched::runtime::cuda
