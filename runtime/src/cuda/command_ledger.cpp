#include "cuda/command_ledger.h"

#include <stdexcept>

namespace pipesched::runtime::cuda {

void CommandLedger::clear() {
  ops_.clear();
  byStream_[0].clear();
  byStream_[1].clear();
  cursor_[0] = cursor_[1] = 0;
  queued_ = 0;
  open_ = false;
}

void CommandLedger::open(bool communication) {
  if (open_)
    throw std::logic_error("CommandLedger: an op is already open");
  byStream_[communication].push_back(ops_.size());
  ops_.push_back(Op{communication, 0});
  open_ = true;
}

void CommandLedger::close() { open_ = false; }

bool CommandLedger::mayIssue(size_t commands) const {
  const size_t own = open_ ? ops_.back().commands : 0;
  return queued_ + commands <= bound_ || queued_ == own;
}

void CommandLedger::issue(size_t commands) {
  if (!open_)
    throw std::logic_error("CommandLedger: commands outside an op");
  ops_.back().commands += commands;
  queued_ += commands;
}

std::optional<size_t> CommandLedger::oldestUnfinished(bool communication) const {
  const std::vector<size_t> &ops = byStream_[communication];
  if (cursor_[communication] == ops.size())
    return std::nullopt;
  return ops[cursor_[communication]];
}

std::optional<size_t> CommandLedger::nextToFinish(bool communication) const {
  std::optional<size_t> op = oldestUnfinished(communication);
  if (op && open_ && *op + 1 == ops_.size())
    return std::nullopt; // still issuing
  return op;
}

void CommandLedger::finish(bool communication) {
  std::optional<size_t> op = nextToFinish(communication);
  if (!op)
    throw std::logic_error("CommandLedger: nothing to finish on this stream");
  queued_ -= ops_[*op].commands;
  ++cursor_[communication];
}

} // namespace pipesched::runtime::cuda
