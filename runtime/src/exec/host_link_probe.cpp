#include "exec/host_link_probe.h"

#include "comm/agreement.h"

#include <chrono>
#include <vector>

namespace pipesched::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTag = 1;

double nsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Timed by the host's clock: every call completes before it returns.
class HostLinkProbe final : public LinkProbe {
public:
  // A communicator of its own, so that no other message can match the
  // ring's (MPI_Comm_idup: every rank takes part, with the deadline).
  HostLinkProbe(MPI_Comm world, int rank, double timeout) : rank_(rank), timeout_(timeout) {
    MPI_Request request;
    MPI_Comm_idup(world, &comm_, &request);
    waitOrAbort(&request, 1, rank_, timeout_, "the set-up of --profile's ring of transfers");
  }
  ~HostLinkProbe() override { MPI_Comm_free(&comm_); }
  HostLinkProbe(const HostLinkProbe &) = delete;
  HostLinkProbe &operator=(const HostLinkProbe &) = delete;

  std::string path() const override { return "over MPI in host memory"; }

  double shift(int64_t bytes, int next, int previous) override {
    if (out_.size() != size_t(bytes)) {
      out_.assign(size_t(bytes), 1);
      in_.assign(size_t(bytes), 0);
    }
    MPI_Request requests[2];
    const Clock::time_point start = Clock::now();
    MPI_Irecv(in_.data(), int(bytes), MPI_BYTE, previous, kTag, comm_, &requests[0]);
    MPI_Isend(out_.data(), int(bytes), MPI_BYTE, next, kTag, comm_, &requests[1]);
    waitOrAbort(requests, 2, rank_, timeout_, "--profile's ring of transfers");
    return nsSince(start);
  }

  // In place, round after round: only the time counts.
  double allreduce(int64_t floats) override {
    if (sum_.size() != size_t(floats))
      sum_.assign(size_t(floats), 1.0f);
    MPI_Request request;
    const Clock::time_point start = Clock::now();
    MPI_Iallreduce(MPI_IN_PLACE, sum_.data(), int(floats), MPI_FLOAT, MPI_SUM, comm_,
                   &request);
    waitOrAbort(&request, 1, rank_, timeout_, "--profile's all-reduce");
    return nsSince(start);
  }

private:
  int rank_;
  double timeout_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<char> out_, in_;
  std::vector<float> sum_;
};

} // namespace

std::unique_ptr<LinkProbe> makeHostLinkProbe(MPI_Comm world, int rank, double timeout) {
  return std::make_unique<HostLinkProbe>(world, rank, timeout);
}

} // namespace pipesched::runtime
