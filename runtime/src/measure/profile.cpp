#include "measure/profile.h"

#include "pipesched/Program/Costs.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pipesched::runtime {
namespace {

constexpr const char *kDirectionNames[kNumDirections] = {"forward", "backward",
                                                          "backward_weight",
                                                          "optimizer step"};

std::string str(std::string_view s) { return std::string(s); }

constexpr int kWarmUp = 5;

// Shifts per size: 200 for small messages, fewer for large ones (at
// most 32 MiB each way unless that leaves fewer than 20), so that large
// messages do not keep the job long.
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
// one from the previous, all at once, as a pipeline's transfers go; rank 0's
// times count. Every rank takes part (every link is used, no rank sleeps
// through it). The probe's waits have the deadline.
TransferMeasurement ringShift(LinkProbe &probe, int rank, int ranks, int64_t actBytes) {
  TransferMeasurement m;
  m.path = probe.path();
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  for (int64_t bytes : transferSizes(actBytes)) {
    if (bytes > int64_t(1) << 30)
      break; // MPI counts are ints: the fit has the smaller sizes
    const int64_t rounds = roundsFor(bytes);
    std::vector<double> shift;
    for (int64_t i = 0; i < kWarmUp + rounds; ++i) {
      const double ns = probe.shift(bytes, next, previous);
      if (i >= kWarmUp)
        shift.push_back(ns);
    }
    m.bytes.push_back(bytes);
    m.rounds.push_back(rounds);
    m.oneWayNs.push_back(rank == 0 ? median(shift) : 0);
  }
  return m;
}

// Every rank all-reduces one stage's weights (floats, summed) at once, as a
// gradient reduction does; rank 0's times count. Open MPI's all-reduce is
// not the point-to-point link's ring: measured, not derived.
void allreduceTime(LinkProbe &probe, int rank, int64_t weightBytes, TransferMeasurement &m) {
  const int64_t count = std::min<int64_t>(weightBytes / int64_t(sizeof(float)), 1 << 28);
  if (count <= 0)
    return;
  const int64_t rounds = std::clamp<int64_t>(roundsFor(count * int64_t(sizeof(float))), 20, 100);
  std::vector<double> times;
  for (int64_t i = 0; i < kWarmUp + rounds; ++i) {
    const double ns = probe.allreduce(count);
    if (i >= kWarmUp)
      times.push_back(ns);
  }
  m.reduceBytes = count * int64_t(sizeof(float));
  m.reduceRounds = rounds;
  m.reduceNs = rank == 0 ? median(times) : 0;
}

} // namespace

std::vector<ComputeSample> computeSamples(const Program &program, int rank,
                                          const std::vector<OpTiming> &timeline,
                                          int steps) {
  const RankProgram &rp = program.ranks[size_t(rank)];
  std::vector<ComputeSample> samples;
  for (const OpTiming &t : timeline) {
    if (steps > 1 && t.step == 0)
      continue;
    const Op &op = rp.ops[size_t(t.op)];
    Direction d;
    if (op.kind == OpKind::Forward)
      d = Direction::Fwd;
    else if (op.kind == OpKind::Backward)
      d = Direction::Bwd;
    else if (op.kind == OpKind::BackwardWeight)
      d = Direction::BwdW;
    else if (op.kind == OpKind::OptimizerStep)
      d = Direction::Optimizer;
    else
      continue;
    samples.push_back(ComputeSample{op.stage, d, t.endNs - t.startNs});
  }
  return samples;
}

std::string packSamples(const std::vector<ComputeSample> &samples) {
  std::string out;
  out.reserve(samples.size() * 3 * sizeof(int64_t));
  for (const ComputeSample &s : samples) {
    const int64_t v[3] = {s.stage, int64_t(s.direction), s.ns};
    out.append(reinterpret_cast<const char *>(v), sizeof v);
  }
  return out;
}

std::vector<ComputeSample> unpackSamples(const std::string &bytes) {
  constexpr size_t kSize = 3 * sizeof(int64_t);
  if (bytes.size() % kSize)
    throw std::runtime_error("a truncated --profile sample");
  std::vector<ComputeSample> samples(bytes.size() / kSize);
  for (size_t i = 0; i < samples.size(); ++i) {
    int64_t v[3];
    std::memcpy(v, bytes.data() + i * kSize, kSize);
    if (v[1] < 0 || v[1] >= kNumDirections)
      throw std::runtime_error("a malformed --profile sample");
    samples[i] = ComputeSample{v[0], Direction(v[1]), v[2]};
  }
  return samples;
}

double trimmedMean(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const size_t drop = values.size() / 10;
  double sum = 0;
  for (size_t i = drop; i < values.size() - drop; ++i)
    sum += values[i];
  return sum / double(values.size() - 2 * drop);
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2)
    return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

TransferFit fitTransfer(const std::vector<double> &bytes, const std::vector<double> &ns) {
  const size_t n = std::min(bytes.size(), ns.size());
  if (n == 0)
    return {};
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += bytes[i];
    my += ns[i];
  }
  mx /= double(n);
  my /= double(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (bytes[i] - mx) * (bytes[i] - mx);
    sxy += (bytes[i] - mx) * (ns[i] - my);
  }
  TransferFit fit;
  fit.perByte = sxx > 0 ? sxy / sxx : 0;
  fit.latency = my - fit.perByte * mx;
  if (fit.perByte < 0) { // time falls with size: noise; the best constant
    fit.perByte = 0;
    fit.latency = my;
  }
  if (fit.latency < 0) { // the best line through the origin
    double xx = 0, xy = 0;
    for (size_t i = 0; i < n; ++i) {
      xx += bytes[i] * bytes[i];
      xy += bytes[i] * ns[i];
    }
    fit.latency = 0;
    fit.perByte = xx > 0 ? std::max(0.0, xy / xx) : 0;
  }
  return fit;
}

namespace {
// The cost file's "measured" object: what was run and how it was timed,
// for the reader (the compiler reads none of it).
nlohmann::ordered_json measuredSection(const Program &program,
                                       const TransferMeasurement &transfer,
                                       const ProfileContext &context,
                                       const nlohmann::ordered_json &counts) {
  nlohmann::ordered_json measured;
  measured["backend"] = context.backend;
  measured["ranks"] = context.ranks;
  measured["steps"] = context.steps;
  measured["hidden"] = context.hidden;
  measured["batch"] = context.batch;
  // Per stage for a partitioned program, else --layers-per-stage.
  if (context.stageLayers.empty())
    measured["layers"] = context.layers;
  else
    measured["layers"] = context.stageLayers;
  measured["microbatches"] = program.microbatches;
  measured["program"] = context.program;
  measured["model"] = context.model;
  measured["samples"] = counts;
  measured["steps_used"] = context.steps > 1 ? "2.." + std::to_string(context.steps) : "1";
  measured["statistic"] = "trimmed mean (10% each side)";
  measured["transfer"] = {
      {"method", transfer.bytes.empty()
                     ? "none: one rank"
                     : "every rank sends to the next and receives from the previous "
                       "at once" +
                           (transfer.path.empty() ? "" : ", " + transfer.path) +
                           "; one way = rank 0's median shift; latency + per_byte * "
                           "bytes by least squares"},
      {"bytes", transfer.bytes},
      {"reduce_rounds", transfer.reduceRounds},
      {"shifts", transfer.rounds},
      {"one_way", transfer.oneWayNs}};
  return measured;
}
} // namespace

nlohmann::ordered_json costFile(const Program &program,
                                const std::vector<ComputeSample> &samples,
                                const TransferMeasurement &transfer,
                                const ProfileContext &context) {
  namespace costs = pipesched::costs;
  const size_t S = size_t(program.stages);
  std::vector<std::vector<double>> ns[kNumDirections];
  for (auto &perStage : ns)
    perStage.resize(S);
  for (const ComputeSample &s : samples) {
    if (s.stage < 0 || size_t(s.stage) >= S)
      throw std::runtime_error("a --profile sample of stage " + std::to_string(s.stage) +
                               ", out of range [0, " + std::to_string(S) + ")");
    ns[int(s.direction)][size_t(s.stage)].push_back(double(s.ns));
  }
  const std::string_view keys[kNumDirections] = {costs::kFwd, costs::kBwd, costs::kBwdW,
                                                 costs::kOptimizer};
  nlohmann::ordered_json doc, counts;
  doc[str(costs::kFormatField)] = str(costs::kFormat);
  doc[str(costs::kVersionField)] = costs::kVersion;
  doc[str(costs::kUnit)] = str(costs::kUnitNs);
  doc[str(costs::kStages)] = program.stages;
  // Optimizer steps last, after the transfer fit.
  auto listMedians = [&](int d) {
    // bwd_w is listed only for a split program.
    const bool listed = d != int(Direction::BwdW) || program.splitBackward;
    nlohmann::ordered_json medians = nlohmann::ordered_json::array(),
                           n = nlohmann::ordered_json::array();
    // Optimizer steps are optional in a cost file: a timeline without
    // them (a program fragment) leaves them out.
    if (d == int(Direction::Optimizer))
      for (size_t s = 0; s < S; ++s)
        if (ns[d][s].empty())
          return;
    for (size_t s = 0; listed && s < S; ++s) {
      // Every valid program computes every job; a stage without samples
      // would be a mean of nothing.
      if (ns[d][s].empty())
        throw std::runtime_error("--profile: no rank timed a " +
                                 std::string(kDirectionNames[d]) + " of stage " +
                                 std::to_string(s));
      n.push_back(ns[d][s].size());
      medians.push_back(trimmedMean(std::move(ns[d][s])));
    }
    doc[str(keys[d])] = medians;
    counts[str(keys[d])] = n;
  };
  for (Direction d : {Direction::Fwd, Direction::Bwd, Direction::BwdW})
    listMedians(int(d));
  doc[str(costs::kActBytes)] = context.actBytes;
  doc[str(costs::kWeightBytes)] = context.weightBytes;

  std::vector<double> bytes(transfer.bytes.begin(), transfer.bytes.end());
  const TransferFit fit = fitTransfer(bytes, transfer.oneWayNs);
  doc[str(costs::kTransfer)] = {{str(costs::kLatency), fit.latency},
                                {str(costs::kPerByte), fit.perByte}};
  listMedians(int(Direction::Optimizer));
  if (transfer.reduceBytes > 0)
    doc[str(costs::kReduce)] = {{str(costs::kReduceBytes), transfer.reduceBytes},
                                {str(costs::kReduceTime), transfer.reduceNs}};

  doc[str(pipesched::costs::kMeasured)] = measuredSection(program, transfer, context, counts);
  return doc;
}

TransferMeasurement measureLink(LinkProbe &probe, int rank, int ranks, int64_t actBytes,
                                int64_t weightBytes) {
  TransferMeasurement m = ringShift(probe, rank, ranks, actBytes);
  allreduceTime(probe, rank, weightBytes, m);
  return m;
}

} // namespace pipesched::runtime
