#include "cuda_tracker.h"

#include "../poll_backoff.h"

#include <algorithm>
#include <chrono>
#include <sched.h>
#include <thread>

namespace pipesched::runtime::cuda {
namespace {

// Enough queued work to overlap transfers with compute, few enough GPU
// commands that a launch never blocks the host (so every wait stays a poll
// with a deadline).
constexpr size_t kMaxInFlight = 32;

} // namespace

OpTracker::OpTracker(cudaStream_t compute, cudaStream_t comm, EventPool &timing,
                     double timeoutSeconds, std::function<std::string()> asyncError)
    : compute_(compute), comm_(comm), timing_(timing), timeout_(timeoutSeconds),
      asyncError_(std::move(asyncError)) {}

void OpTracker::beginStep() {
  records_.clear();
  byStream_[0].clear();
  byStream_[1].clear();
  cursor_[0] = cursor_[1] = 0;
  stepStart_ = timing_.record(compute_);
}

void OpTracker::beginOp(size_t index, bool communication) {
  byStream_[communication].push_back(records_.size());
  records_.push_back(Record{index, communication, nullptr, nullptr});
}

void OpTracker::started() {
  Record &r = records_.back();
  if (!r.start)
    r.start = timing_.record(stream(r.comm));
}

void OpTracker::endOp() {
  started();
  Record &r = records_.back();
  r.end = timing_.record(stream(r.comm));
}

bool OpTracker::advance(std::string &error) {
  for (int s = 0; s < 2; ++s) {
    while (cursor_[s] < byStream_[s].size()) {
      const Record &r = records_[byStream_[s][cursor_[s]]];
      if (!r.end)
        break; // the op being issued
      cudaError_t e = cudaEventQuery(r.end.get());
      if (e == cudaErrorNotReady)
        break;
      if (e != cudaSuccess) {
        error = std::string("CUDA error: ") + cudaGetErrorString(e);
        return false;
      }
      ++cursor_[s];
    }
  }
  return true;
}

// Records are in program order, so each stream's cursor is its earliest
// unfinished op.
size_t OpTracker::stalledOp() const {
  for (int s : {1, 0})
    if (cursor_[s] < byStream_[s].size())
      return records_[byStream_[s][cursor_[s]]].op;
  return currentOp();
}

// Polls like the CPU transport (PollBackoff); the deadline restarts whenever
// an op finishes.
bool OpTracker::wait(const std::function<bool()> &done, Stall &stall) {
  using Clock = std::chrono::steady_clock;
  auto deadline = deadlineAfter(Clock::now(), timeout_);
  PollBackoff backoff;
  size_t progress = finished();
  for (;;) {
    std::string error;
    if (advance(error) && (error = asyncError_()).empty() && done())
      return true;
    if (!error.empty()) {
      stall = Stall{stalledOp(), {}, error};
      return false;
    }
    const auto now = Clock::now();
    if (finished() != progress) {
      progress = finished();
      deadline = deadlineAfter(now, timeout_);
    }
    if (now > deadline) {
      stall = Stall{stalledOp(), {}, ""};
      return false;
    }
    backoff.pause();
  }
}

bool OpTracker::wait(cudaEvent_t event, Stall &stall) {
  return wait([event] { return cudaEventQuery(event) != cudaErrorNotReady; }, stall);
}

bool OpTracker::throttle(Stall &stall) {
  return wait([this] { return records_.size() - finished() < kMaxInFlight; }, stall);
}

bool OpTracker::drain(Stall &stall) {
  return wait([this] { return finished() == records_.size(); }, stall);
}

void OpTracker::deviceTimes(OpTiming *ops, size_t count) const {
  auto ns = [this](const EventRef &e) {
    float ms = 0;
    cudaEventElapsedTime(&ms, stepStart_.get(), e.get());
    return int64_t(double(ms) * 1e6);
  };
  for (size_t i = 0; i < count && i < records_.size(); ++i)
    if (size_t(ops[i].op) == records_[i].op && records_[i].end) {
      ops[i].startNs = ns(records_[i].start);
      ops[i].endNs = ns(records_[i].end);
    }
}

} // namespace pipesched::runtime::cuda
