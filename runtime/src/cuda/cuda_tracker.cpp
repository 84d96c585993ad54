#include "cuda/cuda_tracker.h"

#include "comm/poll_backoff.h"
#include "cuda/cuda_check.h"

namespace pipesched::runtime::cuda {
namespace {

// An op's own events: the start and the end of its work on its stream.
constexpr size_t kTimingCommands = 2;

} // namespace

OpTracker::OpTracker(cudaStream_t compute, cudaStream_t comm, EventPool &timing,
                     double timeoutSeconds, std::function<std::string()> asyncError)
    : compute_(compute), comm_(comm), timing_(timing), timeout_(timeoutSeconds),
      asyncError_(std::move(asyncError)) {}

// The previous step was drained: nothing is queued.
void OpTracker::beginStep() {
  records_.clear();
  ledger_.clear();
  stepStart_ = timing_.record(compute_);
  // The communication stream has the higher priority and is otherwise not
  // ordered after this event: a transfer could start before the step's
  // start and get a negative time. One wait, outside any op (the ledger
  // counts nothing: the previous step drained both streams).
  check(cudaStreamWaitEvent(comm_, stepStart_.get(), 0), "cudaStreamWaitEvent");
}

bool OpTracker::beginOp(size_t index, bool communication, Stall &stall) {
  ledger_.open(communication);
  records_.push_back(Record{index, communication, nullptr, nullptr});
  return reserve(kTimingCommands, stall);
}

void OpTracker::started(bool communication) {
  if (!ledger_.isOpen()) // set-up and --verify: no op to time
    return;
  Record &r = records_.back();
  if (r.comm == communication && !r.start)
    r.start = timing_.record(stream(r.comm));
}

void OpTracker::endOp() {
  started(records_.back().comm);
  Record &r = records_.back();
  r.end = timing_.record(stream(r.comm));
  ledger_.close();
}

bool OpTracker::reserve(size_t commands, Stall &stall) {
  if (!ledger_.isOpen())
    return true;
  if (!ledger_.mayIssue(commands) &&
      !wait([&] { return ledger_.mayIssue(commands); }, stall))
    return false;
  ledger_.issue(commands);
  return true;
}

bool OpTracker::advance(std::string &error) {
  for (bool comm : {false, true}) {
    while (std::optional<size_t> i = ledger_.nextToFinish(comm)) {
      cudaError_t e = cudaEventQuery(records_[*i].end.get());
      if (e == cudaErrorNotReady)
        break;
      if (e != cudaSuccess) {
        error = std::string("CUDA error: ") + cudaGetErrorString(e);
        return false;
      }
      ledger_.finish(comm);
    }
  }
  return true;
}

// Ops are in program order, so each stream's oldest unfinished op is what
// it waits for; a transfer or collective first, since the peers wait too.
size_t OpTracker::stalledOp() const {
  for (bool comm : {true, false})
    if (std::optional<size_t> i = ledger_.oldestUnfinished(comm))
      return records_[*i].op;
  return currentOp();
}

// Polls like the CPU transport (PollBackoff); the deadline restarts whenever
// an op finishes, and counts only the time this rank ran (Deadline).
bool OpTracker::wait(const std::function<bool()> &done, Stall &stall) {
  Deadline deadline(timeout_);
  PollBackoff backoff;
  size_t progress = ledger_.finished();
  for (;;) {
    std::string error;
    if (advance(error) && (error = asyncError_()).empty() && done())
      return true;
    if (!error.empty()) {
      stall = Stall{stalledOp(), {}, error};
      return false;
    }
    if (ledger_.finished() != progress) {
      progress = ledger_.finished();
      deadline = Deadline(timeout_);
    } else if (deadline.expired()) {
      stall = Stall{stalledOp(), {}, ""};
      return false;
    }
    backoff.pause();
  }
}

bool OpTracker::wait(cudaEvent_t event, Stall &stall) {
  return wait([event] { return cudaEventQuery(event) != cudaErrorNotReady; }, stall);
}

bool OpTracker::drain(Stall &stall) {
  return wait([this] { return ledger_.finished() == ledger_.ops(); }, stall);
}

void OpTracker::deviceTimes(OpTiming *ops, size_t count) const {
  auto ns = [this](const EventRef &e) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, stepStart_.get(), e.get()), "cudaEventElapsedTime");
    return int64_t(double(ms) * 1e6);
  };
  for (size_t i = 0; i < count && i < records_.size(); ++i)
    if (size_t(ops[i].op) == records_[i].op && records_[i].end) {
      ops[i].startNs = ns(records_[i].start);
      ops[i].endNs = ns(records_[i].end);
      ops[i] = clampedToStep(ops[i]);
    }
}

} // namespace pipesched::runtime::cuda
