#include "profile.h"

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
                       "at once, over MPI in host memory; one way = rank 0's median "
                       "shift; latency + per_byte * bytes by least squares"},
      {"bytes", transfer.bytes},
      {"reduce_rounds", transfer.reduceRounds},
      {"shifts", transfer.rounds},
      {"one_way", transfer.oneWayNs}};
  doc[str(costs::kMeasured)] = measured;
  return doc;
}

} // namespace pipesched::runtime
