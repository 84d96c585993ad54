#include "comm/agreement.h"

#include "comm/abort_job.h"
#include "comm/poll_backoff.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

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

// An option's value as the ranks exchange it: a hash of the whole text,
// which is compared, and its start, which a message shows.
struct WireOption {
  uint64_t hash;
  char text[56];
};

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<WireOption> wireOptions(const std::vector<SharedOption> &options) {
  std::vector<WireOption> wire(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string &v = options[i].value;
    wire[i].hash = fnv1a(v);
    std::memset(wire[i].text, 0, sizeof wire[i].text);
    std::memcpy(wire[i].text, v.data(), std::min(v.size(), sizeof wire[i].text - 1));
  }
  return wire;
}

std::string shown(const WireOption &w) {
  const size_t n = strnlen(w.text, sizeof w.text);
  return n == sizeof w.text - 1 ? std::string(w.text, n - 3) + "..." : std::string(w.text, n);
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

bool sameOptions(const Options &o, int rank, int size) {
  const std::vector<SharedOption> options = sharedOptions(o);
  const std::vector<WireOption> own = wireOptions(options);
  std::vector<WireOption> first = own; // rank 0's, once broadcast
  MPI_Request request;
  MPI_Ibcast(first.data(), int(first.size() * sizeof(WireOption)), MPI_BYTE, 0,
             MPI_COMM_WORLD, &request);
  waitOrAbort(&request, 1, rank, o.timeout, "the agreement on the options");
  std::string error;
  for (size_t i = 0; i < own.size() && error.empty(); ++i)
    if (own[i].hash != first[i].hash)
      error = std::string("pipeline-run: ") + options[i].name +
              " differs between ranks: " + shown(first[i]) + " on rank 0, " +
              shown(own[i]) + " on rank " + std::to_string(rank) +
              " (every rank must be given the same options)";
  return !anyRankFailed(error, rank, size, o.timeout, "compare their options");
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
