// The device work of one step, op by op, for the CUDA backend: timing events
// around each op's work on its stream (compute or communication), and the
// host waits. The host runs ahead of the GPU; it waits only (a) to keep at
// most kMaxInFlight ops queued, (b) for a staging buffer to be free again,
// (c) for NCCL to enqueue an op, and (d) at the end of the step. A wait
// gives up when nothing completed for --timeout seconds or NCCL reports an
// error, and names the op: the earliest unfinished transfer or collective
// (what the others wait for), else the earliest unfinished op.
#pragma once

#include "backend.h"
#include "cuda_memory.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

namespace pipesched::runtime::cuda {

class OpTracker {
public:
  // asyncError: "" or an error of the communicators, polled while waiting.
  OpTracker(cudaStream_t compute, cudaStream_t comm, EventPool &timing,
            double timeoutSeconds, std::function<std::string()> asyncError);

  void beginStep();
  void beginOp(size_t index, bool communication);
  // The current op's work starts now on its stream (after its waits).
  void started();
  void endOp();
  size_t currentOp() const { return records_.empty() ? 0 : records_.back().op; }

  // Host waits; false: `stall` says where it gave up.
  bool throttle(Stall &stall);
  bool wait(cudaEvent_t event, Stall &stall);
  bool wait(const std::function<bool()> &done, Stall &stall);
  bool drain(Stall &stall);

  // After drain(): device times of the step's ops, relative to beginStep().
  void deviceTimes(OpTiming *ops, size_t count) const;

private:
  struct Record {
    size_t op;
    bool comm;
    EventRef start, end;
  };
  cudaStream_t stream(bool comm) const { return comm ? comm_ : compute_; }
  // Moves each stream's cursor past its finished ops (a stream finishes in
  // order); false on a CUDA error (in `error`).
  bool advance(std::string &error);
  size_t stalledOp() const;
  size_t finished() const { return cursor_[0] + cursor_[1]; }

  cudaStream_t compute_, comm_;
  EventPool &timing_;
  double timeout_;
  std::function<std::string()> asyncError_;
  EventRef stepStart_;
  std::vector<Record> records_;
  std::vector<size_t> byStream_[2]; // record indices; [1]: communication
  size_t cursor_[2] = {0, 0};
};

} // namespace pipesched::runtime::cuda
