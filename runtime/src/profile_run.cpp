#include "profile_run.h"

#include "agreement.h"
#include "gather.h"

#include "pipesched/Program/Costs.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pipesched::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTag = 1;
constexpr int kWarmUp = 5;

// Shifts per size: 200 for small messages, fewer for large ones (at
// most 32 MiB each way unless that leaves fewer than 20), so that the
// other ranks, which wait for ranks 0 and 1 after it, are not kept long.
int64_t roundsFor(int64_t bytes) {
  return std::clamp<int64_t>((int64_t(1) << 25) / std::max<int64_t>(bytes, 1), 20, 200);
}

// The sizes of the ring's messages: a small one, then one activation and 4x
// and 16x that (what pipeline transfers move).
std::vector<int64_t> transferSizes(int64_t actBytes) {
  std::vector<int64_t> sizes = {64};
  for (int64_t k : {1, 4, 16})
    if (actBytes * k > 64)
      sizes.push_back(actBytes * k);
  return sizes;
}

// Every rank sends one message of each size to the next rank and receives
// one from the previous, all at once, as a pipeline's transfers go; rank 0
// times each shift. Every rank takes part (every link is used, no rank
// sleeps through it). Every wait has the deadline.
TransferMeasurement ringShift(MPI_Comm comm, int rank, int ranks, int64_t actBytes,
                              double timeout) {
  TransferMeasurement m;
  const std::string what = "--profile's ring of transfers";
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  for (int64_t bytes : transferSizes(actBytes)) {
    if (bytes > int64_t(1) << 30)
      break; // MPI counts are ints: the fit has the smaller sizes
    std::vector<char> out(static_cast<size_t>(bytes), 1), in(out.size());
    const int64_t rounds = roundsFor(bytes);
    std::vector<double> shift;
    for (int64_t i = 0; i < kWarmUp + rounds; ++i) {
      MPI_Request requests[2];
      const Clock::time_point start = Clock::now();
      MPI_Irecv(in.data(), int(bytes), MPI_BYTE, previous, kTag, comm, &requests[0]);
      MPI_Isend(out.data(), int(bytes), MPI_BYTE, next, kTag, comm, &requests[1]);
      waitOrAbort(requests, 2, rank, timeout, what);
      if (i >= kWarmUp)
        shift.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
    }
    m.bytes.push_back(bytes);
    m.rounds.push_back(rounds);
    m.oneWayNs.push_back(rank == 0 ? median(shift) : 0);
  }
  return m;
}

// Every rank all-reduces one stage's weights (floats, summed) at once, as a
// gradient reduction does; rank 0 times each. Open MPI's all-reduce is not
// the point-to-point link's ring: measured, not derived. Every wait has the
// deadline.
void allreduceTime(MPI_Comm comm, int rank, int64_t weightBytes, double timeout,
                   TransferMeasurement &m) {
  const int64_t count = std::min<int64_t>(weightBytes / int64_t(sizeof(float)), 1 << 28);
  if (count <= 0)
    return;
  std::vector<float> data(size_t(count), 1.0f);
  const int64_t rounds = std::clamp<int64_t>(roundsFor(count * int64_t(sizeof(float))), 20, 100);
  std::vector<double> times;
  for (int64_t i = 0; i < kWarmUp + rounds; ++i) {
    MPI_Request request;
    const Clock::time_point start = Clock::now();
    MPI_Iallreduce(MPI_IN_PLACE, data.data(), int(count), MPI_FLOAT, MPI_SUM, comm, &request);
    waitOrAbort(&request, 1, rank, timeout, "--profile's all-reduce");
    if (i >= kWarmUp)
      times.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  m.reduceBytes = count * int64_t(sizeof(float));
  m.reduceRounds = rounds;
  m.reduceNs = rank == 0 ? median(times) : 0;
}

} // namespace

std::string writeProfile(MPI_Comm world, const Program &program, int rank,
                         const std::vector<OpTiming> &timeline, const ProfileContext &context,
                         const std::string &path, double timeout) {
  std::vector<std::string> parts =
      gatherToRoot(world, packSamples(computeSamples(program, rank, timeline, context.steps)),
                   rank, timeout, "the gathering of --profile's timings");

  // A communicator of its own, so that no other message can match the
  // ring's (MPI_Comm_idup: every rank takes part, with the deadline).
  TransferMeasurement transfer;
  if (context.ranks >= 2) {
    MPI_Comm comm;
    MPI_Request request;
    MPI_Comm_idup(world, &comm, &request);
    waitOrAbort(&request, 1, rank, timeout, "the set-up of --profile's ring of transfers");
    transfer = ringShift(comm, rank, context.ranks, context.actBytes, timeout);
    allreduceTime(comm, rank, context.weightBytes, timeout, transfer);
    MPI_Comm_free(&comm);
  }
  if (rank != 0)
    return "";

  std::vector<ComputeSample> samples;
  for (const std::string &part : parts) {
    std::vector<ComputeSample> more = unpackSamples(part);
    samples.insert(samples.end(), more.begin(), more.end());
  }
  nlohmann::ordered_json doc;
  try {
    doc = costFile(program, samples, transfer, context);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  std::ofstream out(path);
  out << doc.dump(2) << "\n";
  out.close();
  if (!out)
    return "cannot write the profile to " + path + ": " + std::strerror(errno);

  const auto &fit = doc[std::string(costs::kTransfer)];
  const std::string steps =
      context.steps > 1 ? "steps 2.." + std::to_string(context.steps) : "step 1";
  const size_t optimizer = size_t(std::count_if(
      samples.begin(), samples.end(),
      [](const ComputeSample &s) { return s.direction == Direction::Optimizer; }));
  std::printf("profile: %zu compute and %zu optimizer timings of %d ranks (%s); transfer "
              "%.2f us + %.3f ns per byte; written to %s\n",
              samples.size() - optimizer, optimizer, context.ranks, steps.c_str(),
              fit[std::string(costs::kLatency)].get<double>() / 1e3,
              fit[std::string(costs::kPerByte)].get<double>(), path.c_str());
  std::fflush(stdout);
  return "";
}

} // namespace pipesched::runtime
