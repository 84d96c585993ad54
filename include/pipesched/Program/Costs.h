//===- Costs.h - the measured cost file, shared -----------------*- C++ -*-===//
//
// The one description of a cost file (docs/calibration.md): what
// `pipeline-run --profile FILE` measures on the machine it runs on and
// `--sched-calibrate=costs=FILE` puts into a step's `#sched.cost`. The
// runtime writes it, the compiler reads it; both include this header, which
// depends on nothing but the C++17 standard library.
//
//   {"format": "pipesched-costs", "version": 1, "unit": "ns",
//    "stages": 4,
//    "fwd": [...], "bwd": [...], "bwd_w": [...],   // per stage
//    "act_bytes": 2048, "weight_bytes": 16640,
//    "transfer": {"latency": 5200.0, "per_byte": 0.35},
//    "optimizer": [...],                             // per stage
//    "reduce": {"bytes": 526336, "time": 512000.0},   // one all-reduce
//    "measured": {...}}                              // how: free-form
//
// Durations are nanoseconds. `bwd_w` is empty unless the profiled program
// split its backwards. One tensor of `b` bytes moves between workers in
// `latency + per_byte * b` nanoseconds.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_PROGRAM_COSTS_H
#define PIPESCHED_PROGRAM_COSTS_H

#include <cstdint>
#include <string_view>

namespace pipesched::costs {

inline constexpr std::string_view kFormat = "pipesched-costs";
inline constexpr int64_t kVersion = 1;
/// The only time unit a cost file uses.
inline constexpr std::string_view kUnitNs = "ns";

/// Top-level fields.
inline constexpr std::string_view kFormatField = "format", kVersionField = "version",
                                  kUnit = "unit", kStages = "stages",
                                  kFwd = "fwd", kBwd = "bwd", kBwdW = "bwd_w",
                                  kActBytes = "act_bytes",
                                  kWeightBytes = "weight_bytes",
                                  kTransfer = "transfer",
                                  kOptimizer = "optimizer",
                                  kReduce = "reduce",
                                  kMeasured = "measured";
inline constexpr std::string_view kAll[] = {
    kFormatField, kVersionField, kUnit,     kStages,      kFwd,
    kBwd,         kBwdW,         kActBytes, kWeightBytes, kTransfer,
    kOptimizer,   kReduce,       kMeasured};
/// Optional: `optimizer`, the optimizer step per stage (ns). Every duration
/// is the runtime's trimmed mean over the ops it timed.

/// Fields of `reduce` (optional): an all-reduce of `bytes` (one stage's
/// weights) over every profiled rank took `time` ns.
inline constexpr std::string_view kReduceBytes = "bytes", kReduceTime = "time";
inline constexpr std::string_view kReduceAll[] = {kReduceBytes, kReduceTime};

/// Fields of `transfer`.
inline constexpr std::string_view kLatency = "latency", kPerByte = "per_byte";
inline constexpr std::string_view kTransferAll[] = {kLatency, kPerByte};

/// A cost file's stage count is bounded like a program's.
inline constexpr int64_t kMaxStages = int64_t(1) << 20;

} // namespace pipesched::costs

#endif // PIPESCHED_PROGRAM_COSTS_H
