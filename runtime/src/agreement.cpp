#include "agreement.h"

#include "abort_job.h"
#include "poll_backoff.h"

#include <mpi.h>

#include <cstdio>

namespace pipesched::runtime {
namespace {

// Reduces `n` values over the world, waiting at most `timeout` seconds; on
// expiry the rank says so (with its own problem, if any) and ends the job.
void reduceAll(const void *mine, void *result, int n, MPI_Datatype type, MPI_Op op,
               int rank, double timeout, const char *stage, const std::string &error) {
  MPI_Request request;
  MPI_Iallreduce(mine, result, n, type, op, MPI_COMM_WORLD, &request);
  Deadline deadline(timeout);
  PollBackoff backoff;
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    if (deadline.expired())
      break;
    backoff.pause();
  }
  if (!error.empty())
    std::fprintf(stderr, "%s\n", error.c_str());
  abortJob(2,
           "pipeline-run: rank %d timed out after %.1f s waiting for the other "
           "ranks to %s",
           rank, timeout, stage);
}

int reduce(int mine, MPI_Op op, int rank, double timeout, const char *stage,
           const std::string &error) {
  int result = 0;
  reduceAll(&mine, &result, 1, MPI_INT, op, rank, timeout, stage, error);
  return result;
}

} // namespace

void waitOrAbort(MPI_Request *requests, int count, int rank, double timeout,
                 const std::string &what) {
  Deadline deadline(timeout);
  PollBackoff backoff;
  for (;;) {
    int done = 0;
    MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (done)
      return;
    if (deadline.expired())
      break;
    backoff.pause();
  }
  abortJob(2, "pipeline-run: rank %d timed out after %.1f s in %s", rank, timeout,
           what.c_str());
}

bool anyRankFailed(const std::string &error, int rank, int size, double timeout,
                   const char *stage) {
  int first = reduce(error.empty() ? size : rank, MPI_MIN, rank, timeout, stage, error);
  if (first == rank) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::fflush(stderr);
  }
  return first < size;
}

bool everyRankReports(const std::string &error, int rank, double timeout,
                      const char *stage) {
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::fflush(stderr);
  }
  return reduce(!error.empty(), MPI_MAX, rank, timeout, stage, "") != 0;
}

bool sameOnEveryRank(long long value, int rank, double timeout, const char *stage,
                     long long &lo, long long &hi) {
  // The minimum of (value, -value): the lowest value and minus the highest.
  long long mine[2] = {value, -value}, result[2] = {0, 0};
  reduceAll(mine, result, 2, MPI_LONG_LONG, MPI_MIN, rank, timeout, stage, "");
  lo = result[0];
  hi = -result[1];
  return lo == hi;
}

} // namespace pipesched::runtime
