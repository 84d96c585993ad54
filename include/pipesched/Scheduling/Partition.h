//===- Partition.h - consecutive layers into pipeline stages -----*- C++ -*-===//
//
// Dialect-free. PipeDream's partitioning (Narayanan et al., SOSP 2019,
// section 3.1) for a chain: group L consecutive layers into S stages so
// that the slowest stage's time (forward + backward + weight gradient)
// is as small as possible, under a memory limit per stage. With one stage
// per worker a 1F1B pipeline's step time is driven by that bottleneck:
// (B - 1) of its B microbatches pass the slowest stage back to back.
// docs/partition.md.
//
// Memory model (1F1B, bytes per stage s of S, B microbatches):
//
//   memory(s) = weights(s) + inFlight(s) * input(s)
//   inFlight(s) = min(S - s, B)            (S - s when B is 0: unbounded)
//
// weights(s) sums its layers' weight_bytes (count gradients and optimizer
// state there when they matter); input(s) is the activation of one
// microbatch at the stage's input boundary: the act_bytes of the layer
// before its first (`inputBytes`, the data, for stage 0). 1F1B keeps
// S - s microbatches between a forward and its backward on stage s, and
// a stage keeps only its input (its internals are recomputed in the
// backward, as pipeline-run does and the simulator counts live memory).
//
// The solver is the exact dynamic program over (stages, prefix of layers),
// O(L^2 S) time and O(L S) memory: the stage index of a segment is the
// number of stages before it, so the memory limit (which depends on the
// index through inFlight) is checked exactly. Integer arithmetic
// throughout; check() bounds the input so that no sum overflows.
//
// Typical use, also for a search over S (each call is independent):
//
//   PartitionProblem p;
//   p.layers = ...;                 // e.g. from readLayerFile()
//   p.stages = S;
//   p.memoryLimitBytes = 1 << 30;   // optional
//   if (std::string e = p.check(); !e.empty()) ...;
//   PartitionResult r = partitionLayers(p);
//   if (!r.ok()) ... r.error ...;   // the limit rules out every partition
//   r.partition.bottleneck, r.partition.layerCounts(), ...
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_PARTITION_H
#define PIPESCHED_SCHEDULING_PARTITION_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipesched::scheduling {

/// How to split the layers (--sched-partition's `partition` option).
enum class PartitionMethod {
  Optimal, ///< partitionLayers: the least bottleneck
  Uniform  ///< uniformPartition: equal layer counts
};

/// One layer, per microbatch. Durations are in the step's ticks.
struct Layer {
  std::string name;    ///< for messages
  int64_t fwd = 0;     ///< forward
  int64_t bwd = 0;     ///< backward (its input-gradient half when split)
  int64_t bwdWeight = 0; ///< weight-gradient half of a split backward, or 0
  int64_t actBytes = 0;  ///< the activation the layer outputs
  int64_t weightBytes = 0;
};

/// Largest accepted figures (check()).
inline constexpr int64_t kMaxPartitionLayers = int64_t(1) << 14;
/// Stages x layers: the cells of the dynamic program's table.
inline constexpr int64_t kMaxPartitionCells = int64_t(1) << 24;
/// Stages x layers^2: the steps of the dynamic program (about 1 ns each).
inline constexpr int64_t kMaxPartitionSteps = int64_t(1) << 34;
/// Every duration and size, and the memory limit, is below this (2^53).
inline constexpr int64_t kMaxPartitionValue = int64_t(1) << 53;

struct PartitionProblem {
  std::vector<Layer> layers; ///< in chain order
  int64_t stages = 1;        ///< S
  /// Stage 0's input activation per microbatch (the data).
  int64_t inputBytes = 0;
  /// Bytes per stage (memory(s) above); none: unlimited.
  std::optional<int64_t> memoryLimitBytes;
  /// B, bounding inFlight(s); 0: unbounded.
  int64_t microbatches = 0;

  /// "" or the first problem: no layer; S < 1 or S > L; more than
  /// kMaxPartitionLayers layers or kMaxPartitionCells cells; a negative
  /// figure or one of 2^53 or more (naming the layer by index and name);
  /// total time or weight bytes over all layers beyond 64 bits; a memory
  /// limit below 1 or of 2^53 or more; negative microbatches.
  std::string check() const;

  /// The microbatches stage `stage` keeps (the model above).
  int64_t inFlight(int64_t stage) const;
  /// A layer's time: fwd + bwd + bwdWeight (no overflow after check()).
  int64_t layerTime(size_t layer) const;
  /// input(s) of a stage starting at layer `first`.
  int64_t inputBytesAt(size_t first) const;
};

/// A partition and its figures, one entry per stage.
struct Partition {
  /// The first layer of each stage: starts[0] = 0, strictly increasing,
  /// every stage non-empty.
  std::vector<int64_t> starts;
  std::vector<int64_t> fwd, bwd, bwdWeight; ///< sums over the stage's layers
  std::vector<int64_t> inputBytes;  ///< input(s), the activation it receives
  std::vector<int64_t> weightBytes; ///< weights(s)
  std::vector<int64_t> memoryBytes; ///< memory(s), saturating at INT64_MAX
  /// max over stages of fwd + bwd + bwdWeight.
  int64_t bottleneck = 0;

  int64_t stages() const { return int64_t(starts.size()); }
  /// Layers per stage (what the step records as `layers`).
  std::vector<int64_t> layerCounts(int64_t totalLayers) const;
  int64_t stageTime(int64_t stage) const {
    return fwd[stage] + bwd[stage] + bwdWeight[stage];
  }

  /// "" or the first inconsistency with `problem`: S stages covering
  /// every layer once in order, each figure recomputed, the bottleneck the
  /// maximum, and (with a limit) every stage within it.
  std::string verify(const PartitionProblem &problem) const;
};

/// The figures of the partition that starts its stages at `starts`
/// (checked by Partition::verify, not here). Precondition: check() is "".
Partition evaluatePartition(const PartitionProblem &problem,
                            std::vector<int64_t> starts);

struct PartitionResult {
  Partition partition; ///< valid when ok()
  /// "" or why there is none: check()'s message, or the memory limit that
  /// no partition fits, naming the stage that cannot fit.
  std::string error;
  bool ok() const { return error.empty(); }
};

/// The partition of least bottleneck whose stages all fit the memory
/// limit. Ties: the last stage starts as late as possible, and the layers
/// before it are partitioned by the same rule (optimally for themselves).
/// Runs check() first.
PartitionResult partitionLayers(const PartitionProblem &problem);

/// Equal layer counts: the first L mod S stages get ceil(L / S) layers,
/// the others floor(L / S) (numpy's array_split). Refused, like
/// partitionLayers, when a stage exceeds the memory limit.
PartitionResult uniformPartition(const PartitionProblem &problem);

/// The least memory limit any partition into S stages fits, and the stage
/// that needs it in the partition attaining it. Precondition: check() is
/// "" (the limit itself is ignored).
struct MemoryFloor {
  int64_t bytes = 0;
  int64_t stage = 0;
  Partition partition;
};
MemoryFloor leastMemory(const PartitionProblem &problem);

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_PARTITION_H
