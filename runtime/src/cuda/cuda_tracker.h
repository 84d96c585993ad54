// The device work of one step, op by op, for the CUDA backend: timing events
// around each op's work on its stream (compute or communication), the count
// of queued GPU commands (command_ledger.h), and the host waits. The host
// runs ahead of the GPU; it waits only (a) before queuing commands that
// would overfill CUDA's queue, (b) for a staging buffer to be free again,
// (c) for NCCL to enqueue an op (or, with --gpu-comm mpi, for a transfer's
// data), and (d) at the end of the step. Every wait is for work earlier in
// program order. A wait gives up when nothing completed for --timeout
// seconds or NCCL reports an error, and names the op: the earliest
// unfinished transfer or collective (what the others wait for), else the
// earliest unfinished op.
#pragma once

#include "cuda/command_ledger.h"
#include "cuda/cuda_memory.h"
#include "exec/backend.h"

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
  // False (and `stall` set) when the op's timing events found no room.
  bool beginOp(size_t index, bool communication, Stall &stall);
  // The current op's work starts now on the communication stream or the
  // compute stream (after its waits). Ignored for the other stream's work
  // inside an op (a collective's zeroed gradient buffer; tied_grad's
  // all-reduce): an op is timed on its own stream only.
  void started(bool communication);
  void endOp();
  size_t currentOp() const { return records_.empty() ? 0 : records_.back().op; }

  // Room for `commands` more GPU commands of the current op: waits for
  // earlier ops to finish if they would exceed the bound. Outside an op
  // (set-up, --verify) nothing is counted. False: `stall` says where.
  bool reserve(size_t commands, Stall &stall);

  // Host waits; false: `stall` says where it gave up.
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
  // Marks each stream's finished ops (a stream finishes in order); false on
  // a CUDA error (in `error`).
  bool advance(std::string &error);
  size_t stalledOp() const;

  cudaStream_t compute_, comm_;
  EventPool &timing_;
  double timeout_;
  std::function<std::string()> asyncError_;
  EventRef stepStart_;
  std::vector<Record> records_; // in the ledger's op order
  CommandLedger ledger_;
};

} // namespace pipesched::runtime::cuda
