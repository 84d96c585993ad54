//===- poll_backoff.h - how a waiting rank polls ----------------*- C++ -*-===//
//
// Yield the CPU for the first 5 ms of a wait (a sleep costs its timer slack,
// ~50 us, per message hop, and oversubscribed ranks need the core), then
// sleep 20 us growing to 200 us (a pipeline filling, a dead peer). And how
// a wait's deadline is computed.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_RUNTIME_POLL_BACKOFF_H
#define PIPESCHED_RUNTIME_POLL_BACKOFF_H

#include <algorithm>
#include <chrono>
#include <sched.h>
#include <thread>

namespace pipesched::runtime {

class PollBackoff {
public:
  using Clock = std::chrono::steady_clock;
  PollBackoff() : spinUntil(Clock::now() + std::chrono::milliseconds(5)) {}

  /// Waits a little before the next poll.
  void pause() {
    if (Clock::now() < spinUntil) {
      sched_yield();
      return;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(200));
  }

private:
  Clock::time_point spinUntil;
  std::chrono::microseconds sleep{20};
};

/// The time `seconds` after `now`, saturating at the clock's end: a huge
/// --timeout (`inf`, or anything beyond what the clock can add) means no
/// deadline, instead of an overflow that would expire at once.
inline std::chrono::steady_clock::time_point
deadlineAfter(std::chrono::steady_clock::time_point now, double seconds) {
  using Clock = std::chrono::steady_clock;
  const double room =
      std::chrono::duration<double>(Clock::time_point::max() - now).count();
  if (!(seconds < room / 2))
    return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(seconds));
}

/// A wait's deadline that counts only the time the waiting rank was
/// running: a gap of more than 100 ms between two polls (the rank itself was
/// stopped, e.g. by SIGSTOP, or not scheduled) moves the deadline by the
/// gap. So a rank that stalled does not, once continued (Open MPI sends
/// SIGCONT before it kills a job), report a timeout that blames the peers
/// that were waiting for it.
class Deadline {
public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(double seconds)
      : last(Clock::now()), at(deadlineAfter(last, seconds)) {}
  /// Whether the deadline has passed; call once per poll.
  bool expired() {
    const Clock::time_point now = Clock::now();
    const Clock::duration gap = now - last;
    last = now;
    if (gap > std::chrono::milliseconds(100) && at != Clock::time_point::max())
      at = Clock::time_point::max() - at > gap ? at + gap : Clock::time_point::max();
    return now > at;
  }

private:
  Clock::time_point last, at;
};

} // namespace pipesched::runtime

#endif // PIPESCHED_RUNTIME_POLL_BACKOFF_H
