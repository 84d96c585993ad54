// --profile FILE without MPI: the compute samples of a rank, the
// statistics, the link's measurement through a LinkProbe (link_probe.h),
// the transfer fit and the cost file
// (include/pipesched/Program/Costs.h) that the compiler's calibration reads.
// profile_run.h gathers the samples and measures the transfers.
#pragma once

#include "exec/backend.h"
#include "exec/link_probe.h"
#include "program/program.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

// What a cost file lists per stage, in its order: the directions of a
// stage's compute, then its optimizer step.
enum class Direction : int64_t { Fwd = 0, Bwd = 1, BwdW = 2, Optimizer = 3 };
inline constexpr int kNumDirections = 4;

// One timed compute op.
struct ComputeSample {
  int64_t stage = 0;
  Direction direction = Direction::Fwd;
  int64_t ns = 0;
};

// The forward, backward, backward_weight and optimizer_step ops of this
// rank's `timeline`,
// skipping step 1 when there are several (it pays for first touches).
std::vector<ComputeSample> computeSamples(const Program &program, int rank,
                                          const std::vector<OpTiming> &timeline,
                                          int steps);
std::string packSamples(const std::vector<ComputeSample> &samples);
// Throws std::runtime_error on a malformed buffer.
std::vector<ComputeSample> unpackSamples(const std::string &bytes);

// The median (the mean of the two middle values for an even count); 0 for
// none.
double median(std::vector<double> values);
// The mean of the values left after dropping the lowest and the highest
// 10% (rounded down); 0 for none. What a cost file lists per stage: a sum
// of durations (a step) is predicted by their mean, and a rank preempted
// now and then should not move it; a median would misjudge the bimodal
// durations of a rank that shares its core.
double trimmedMean(std::vector<double> values);

// latency + perByte * bytes fitted to one-way times by least squares, both
// clamped at 0 (a negative slope: the best constant; a negative intercept:
// the best line through the origin).
struct TransferFit {
  double latency = 0, perByte = 0;
};
TransferFit fitTransfer(const std::vector<double> &bytes, const std::vector<double> &ns);

// How the transfers were measured: a ring of shifts over every rank (none
// with one rank), through the backend's path (link_probe.h).
struct TransferMeasurement {
  std::vector<int64_t> bytes;     // message sizes
  std::vector<int64_t> rounds;    // timed shifts per size
  std::vector<double> oneWayNs;   // rank 0's median shift, per size
  // An all-reduce of `reduceBytes` (one stage's weights) over every rank:
  // rank 0's median, ns (0: one rank, nothing to reduce).
  int64_t reduceBytes = 0, reduceRounds = 0;
  double reduceNs = 0;
  // How the messages travelled (LinkProbe::path): "over MPI in host memory".
  std::string path;
};

// The link's measurement, every rank at once (two or more), through `probe`
// (the backend's path, link_probe.h): a ring of shifts (each rank sends to
// the next and receives from the previous) of 64 bytes, one activation, 4x
// and 16x that (5 warm-up shifts, then 200 for small messages, fewer for
// large ones, at least 20), and an all-reduce of one stage's weights (5
// warm-up rounds, then 20 to 100); rank 0's medians count.
TransferMeasurement measureLink(LinkProbe &probe, int rank, int ranks, int64_t actBytes,
                                int64_t weightBytes);

// What the cost file's `measured` records besides the samples.
struct ProfileContext {
  std::string backend, program, model;
  int ranks = 0, steps = 0;
  int64_t hidden = 0, batch = 0, layers = 0;
  // The program's layer count per stage (a partition); empty: `layers` each.
  std::vector<int64_t> stageLayers;
  int64_t actBytes = 0, weightBytes = 0;
};

// The cost file of every rank's samples. Throws std::runtime_error naming
// a stage and direction without samples.
nlohmann::ordered_json costFile(const Program &program,
                                const std::vector<ComputeSample> &samples,
                                const TransferMeasurement &transfer,
                                const ProfileContext &context);

} // namespace pipesched::runtime
