// --profile's measurement of the link between ranks (profile_run.h), made
// through what the backend's own transfers use, so that a cost file is
// calibrated on what the steps run: host MPI on the cpu backend
// (host_link_probe.h); on cuda, its DeviceComm (NCCL, or MPI through pinned
// host memory) between device buffers (cuda/device_link_probe.h).
// Backend::linkProbe() makes one. Every rank calls the same sequence.
#pragma once

#include <cstdint>
#include <string>

namespace pipesched::runtime {

class LinkProbe {
public:
  virtual ~LinkProbe() = default;

  // How a message travels, for the cost file's measured.transfer.method:
  // "over MPI in host memory".
  virtual std::string path() const = 0;

  // One shift of a ring: a message of `bytes` (a multiple of 4) to `next`
  // and one from `previous`, at once; returns once both are complete, with
  // the time they took in ns. A wait past the run's --timeout ends the job
  // ("pipeline-run: rank R timed out after T s in --profile's ...").
  virtual double shift(int64_t bytes, int next, int previous) = 0;

  // A sum of `floats` floats over every rank, in place, as a gradient's
  // all-reduce; its time in ns. The same deadline.
  virtual double allreduce(int64_t floats) = 0;
};

} // namespace pipesched::runtime
