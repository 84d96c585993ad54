#include "measure/profile_run.h"

#include "comm/agreement.h"
#include "comm/gather.h"

#include "pipesched/Program/Costs.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace pipesched::runtime {
std::string writeProfile(MPI_Comm world, const Program &program, int rank,
                         const std::vector<OpTiming> &timeline, const ProfileContext &context,
                         Backend &backend, const std::string &path, double timeout) {
  std::vector<std::string> parts =
      gatherToRoot(world, packSamples(computeSamples(program, rank, timeline, context.steps)),
                   rank, timeout, "the gathering of --profile's timings");

  // Through the backend's own path (link_probe.h).
  TransferMeasurement transfer;
  if (context.ranks >= 2) {
    std::unique_ptr<LinkProbe> probe = backend.linkProbe();
    transfer = measureLink(*probe, rank, context.ranks, context.actBytes, context.weightBytes);
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
