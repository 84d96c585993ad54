#include "comm/startup_watchdog.h"

#include "comm/poll_backoff.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace pipesched::runtime {

StartupWatchdog::StartupWatchdog(double seconds, int rank)
    : thread_([this, seconds, rank] { watch(seconds, rank); }) {}

StartupWatchdog::~StartupWatchdog() {
  disarm();
  thread_.join();
}

void StartupWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  disarmed_ = true;
  wake_.notify_all();
}

// Wakes every 20 ms so that the deadline can tell a stop of the process
// (a gap between wake-ups) from time spent waiting.
void StartupWatchdog::watch(double seconds, int rank) {
  Deadline deadline(seconds);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!disarmed_) {
    if (deadline.expired()) {
      const std::string who = rank >= 0 ? "rank " + std::to_string(rank) : "a rank";
      std::fprintf(stderr,
                   "pipeline-run: %s timed out after %.1f s in MPI_Init: not every "
                   "process of the job started (one stopped, hung or died before or "
                   "while starting MPI; a job whose start-up takes longer needs a "
                   "larger --setup-timeout)\n",
                   who.c_str(), seconds);
      std::fflush(stderr);
      std::fflush(stdout);
      _exit(2); // MPI is not up: no MPI_Abort; the launcher ends the job
    }
    wake_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

int launcherRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char *text = std::getenv(name);
    if (!text || !*text)
      continue;
    char *end = nullptr;
    errno = 0;
    const long v = std::strtol(text, &end, 10);
    if (errno == 0 && *end == '\0' && v >= 0 && v <= INT_MAX)
      return int(v);
  }
  return -1;
}

} // namespace pipesched::runtime
