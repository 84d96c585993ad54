// A deadline on MPI's start-up. MPI_Init waits for every process of the
// job (Open MPI's modex fence) and has no deadline of its own: one process
// stopped, hung or dead before it reaches MPI_Init holds all the others
// inside it forever, where no polled wait of pipeline-run can act. So a
// thread is armed before MPI_Init: if MPI_Init has not returned within the
// deadline, it prints why and ends the process with status 2, and the
// launcher then ends the job (the stuck process included). The deadline
// counts only the time the process ran (poll_backoff.h, Deadline), so a
// process that was itself stopped does not, once continued, blame others.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace pipesched::runtime {

class StartupWatchdog {
public:
  // `rank`: the launcher's rank of this process (-1: unknown), for the
  // message; `seconds`: --setup-timeout's deadline (infinite: none).
  StartupWatchdog(double seconds, int rank);
  ~StartupWatchdog(); // disarms
  StartupWatchdog(const StartupWatchdog &) = delete;
  StartupWatchdog &operator=(const StartupWatchdog &) = delete;

  // MPI_Init returned: the thread ends without a word.
  void disarm();

private:
  void watch(double seconds, int rank);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

// This process's rank as the launcher announces it before MPI_Init
// (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID), else -1.
int launcherRank();

} // namespace pipesched::runtime
