// How many GPU commands (kernel launches, cuBLAS calls, memory copies and
// sets, event records and waits, NCCL calls) the host has queued and not
// seen finish, op by op, for the CUDA backend's two streams. CUDA-free:
// unit-tested on the CPU; OpTracker (cuda_tracker.h) feeds it the events.
//
// Why: a stream's commands wait in a queue of bounded depth; once it is
// full, the next launch blocks the host inside CUDA, with no deadline, until
// the GPU drains it. Behind a transfer from a dead peer it never does. So
// the host keeps the queued total under a bound, and waits (a poll with
// --timeout) for earlier ops to finish before it issues commands that would
// exceed it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace pipesched::runtime::cuda {

class CommandLedger {
public:
  // CUDA queues a stream's commands in a ring (its channel's push buffer)
  // that holds roughly a thousand launches (undocumented, and fewer for
  // commands with large parameters); past it, the launching call blocks.
  // Half of it leaves room for commands larger than a plain launch and for
  // the work that NCCL and cuBLAS queue on their own.
  static constexpr size_t kMaxQueuedCommands = 512;

  explicit CommandLedger(size_t bound = kMaxQueuedCommands) : bound_(bound) {}

  // A new step: everything before has finished.
  void clear();
  // The op now issued, on the communication stream or the compute stream;
  // it stays open (may issue commands) until close().
  void open(bool communication);
  void close();
  bool isOpen() const { return open_; }

  // Whether the open op may queue `commands` more now: when they fit under
  // the bound, or when nothing but the open op's own commands is queued (an
  // op larger than the bound then runs alone: its commands depend on nothing
  // unfinished, so the GPU drains them).
  bool mayIssue(size_t commands) const;
  // Counts `commands` for the open op.
  void issue(size_t commands);

  // Completion, in order per stream: the index (in open() order) of the
  // stream's oldest unfinished op if it is closed (its last command is
  // queued), else nothing; finish() marks it finished.
  std::optional<size_t> nextToFinish(bool communication) const;
  void finish(bool communication);
  // The stream's oldest unfinished op, closed or not.
  std::optional<size_t> oldestUnfinished(bool communication) const;

  size_t queued() const { return queued_; }
  size_t ops() const { return ops_.size(); }
  size_t finished() const { return cursor_[0] + cursor_[1]; }

private:
  struct Op {
    bool communication;
    size_t commands;
  };
  size_t bound_;
  std::vector<Op> ops_;
  std::vector<size_t> byStream_[2]; // op indices; [1]: communication
  size_t cursor_[2] = {0, 0};
  size_t queued_ = 0; // commands of unfinished ops, the open one included
  bool open_ = false;
};

} // namespace pipesched::runtime::cuda
