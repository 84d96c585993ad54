// Calls a function that may block forever (ncclCommAbort can wait for a
// stuck peer) without letting it hold up the caller: the function runs on a
// thread of its own, and the caller waits for it at most a bounded time.
// abort_job.h uses it to abort the backend before MPI_Abort.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace pipesched::runtime {

struct BoundedCall {
  enum class Outcome { Returned, Threw, TimedOut };
  Outcome outcome;
  std::string error; // Threw: the exception's message
};

// Runs `work` on a new thread and waits at most `limit` for it. On
// TimedOut the thread is left running, detached: `work` must only touch
// what outlives it (the process is about to end). If no thread can be
// started, `work` does not run and the result is Threw.
BoundedCall callWithin(std::chrono::milliseconds limit, std::function<void()> work);

} // namespace pipesched::runtime
