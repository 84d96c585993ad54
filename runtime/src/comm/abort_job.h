// Ending the whole job from one rank: every MPI_Abort of pipeline-run goes
// through abortJob, which first aborts the backend (under cuda:
// ncclCommAbort on every communicator, so that no NCCL kernel or proxy
// thread outlives the job) while one is registered, but waits for that at
// most kBackendAbortLimit: ncclCommAbort can block (on a peer stuck in a
// collective, on a hung device), and the job must end anyway.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>

namespace pipesched::runtime {

// Long enough for a healthy ncclCommAbort (milliseconds); short against
// the --timeout the peers wait (60 s by default), so that a blocked one
// delays the end of the job by little. The message is printed before.
inline constexpr std::chrono::milliseconds kBackendAbortLimit{2000};

// While alive, abortJob calls `abort` first (train() registers the
// backend's, for as long as the backend exists). One at a time.
class BackendAbortScope {
public:
  explicit BackendAbortScope(std::function<void()> abort);
  ~BackendAbortScope();
  BackendAbortScope(const BackendAbortScope &) = delete;
  BackendAbortScope &operator=(const BackendAbortScope &) = delete;
};

// Prints the printf-style message and a newline to stderr, flushes stdout
// and stderr, runs the registered backend abort within kBackendAbortLimit
// (saying so if it did not return or failed), then
// MPI_Abort(MPI_COMM_WORLD, code).
[[noreturn]] void abortJob(int code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

// What an error says, for abortJob: its what(), or "out of memory" for a
// std::bad_alloc (whose what() names only the type).
std::string errorText(const std::exception &e);

} // namespace pipesched::runtime
