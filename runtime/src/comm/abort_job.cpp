#include "comm/abort_job.h"

#include "comm/bounded_call.h"

#include <mpi.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>

namespace pipesched::runtime {
namespace {

// Set and read on the main thread only.
std::function<void()> &backendAbort() {
  static std::function<void()> abort;
  return abort;
}

} // namespace

BackendAbortScope::BackendAbortScope(std::function<void()> abort) {
  if (backendAbort())
    throw std::logic_error("BackendAbortScope: one is already registered");
  backendAbort() = std::move(abort);
}

BackendAbortScope::~BackendAbortScope() { backendAbort() = nullptr; }

void abortJob(int code, const char *format, ...) {
  std::va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stdout);
  std::fflush(stderr);
  if (std::function<void()> abort = std::move(backendAbort())) {
    backendAbort() = nullptr; // moved from: unspecified
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const BoundedCall call = callWithin(kBackendAbortLimit, std::move(abort));
    if (call.outcome == BoundedCall::Outcome::TimedOut)
      std::fprintf(stderr,
                   "pipeline-run: rank %d: the backend's abort did not return within "
                   "%.1f s; ending the job without it\n",
                   rank, kBackendAbortLimit.count() / 1000.0);
    else if (call.outcome == BoundedCall::Outcome::Threw)
      std::fprintf(stderr, "pipeline-run: rank %d: the backend's abort failed: %s\n",
                   rank, call.error.c_str());
    std::fflush(stderr);
  }
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort(); // MPI_Abort does not return
}

std::string errorText(const std::exception &e) {
  return dynamic_cast<const std::bad_alloc *>(&e) ? "out of memory" : e.what();
}

} // namespace pipesched::runtime
