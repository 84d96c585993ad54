//===- LayerFile.h - a model's layers, read from JSON ------------*- C++ -*-===//
//
// The layer file of --sched-partition (docs/partition.md):
//
//   {"input": 4096,
//    "layers": [{"name": "embed", "fwd": 2, "bwd": 4, "act": 4096,
//                "weights": 65536}, ...]}
//
// `input` (optional, 0): bytes of one microbatch's input to the first
// layer. Per layer, all required but `bwd_w`: `name`, `fwd` and `bwd` (in
// the step's ticks), `act` (bytes of the activation it outputs per
// microbatch), `weights` (bytes of its weights, with whatever gradients
// and optimizer state should count); `bwd_w`, the weight-gradient half of
// a split backward, is given for every layer or for none. Every number is
// an integer in [0, 2^53). Read with llvm::json, for any pass (a search
// over stage counts reads it once and partitions for each).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_LAYERFILE_H
#define PIPESCHED_TRANSFORMS_LAYERFILE_H

#include "pipesched/Scheduling/Partition.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pipesched {

/// The largest layer file read: 1 KiB for each of the
/// scheduling::kMaxPartitionLayers layers a partition takes.
inline constexpr uint64_t kMaxLayerFileBytes = uint64_t(16) << 20;

struct LayerFile {
  std::vector<scheduling::Layer> layers;
  int64_t inputBytes = 0;
  /// Whether the layers give `bwd_w` (a split backward).
  bool splitBackward = false;
};

/// Reads and checks the layer file at `path` ("-": stdin). Returns "" and
/// fills `out`, or the first problem: the file cannot be read, has more
/// than kMaxLayerFileBytes bytes, nests too deep or holds more than
/// scheduling::kMaxPartitionLayers layers (both found before parsing), is
/// not JSON (with line and column), or a field is missing, unknown, mistyped or out
/// of range, naming the layer by index (`layers[3] ('block2'): ...`). The
/// message does not name the file; callers prefix it.
std::string readLayerFile(llvm::StringRef path, LayerFile &out);

/// The same for a document already in memory.
std::string parseLayerFile(llvm::StringRef text, LayerFile &out);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_LAYERFILE_H
