//===- fuzz_input_files.cpp - the cost and layer file readers -------------===//
//
// libFuzzer target (d): the JSON files the passes read from disk:
// `--sched-calibrate=costs=FILE` (parseCostFile) and
// `--sched-partition=layers=FILE` / `--sched-search=layers=FILE`
// (parseLayerFile). The first byte picks the reader, the rest is the file.
// A cost file that reads is calibrated and the result verified; a layer
// file that reads is partitioned into a stage count taken from the first
// byte. Malformed input must give a message; a crash, sanitizer report,
// leak, timeout or OOM is a finding.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/Calibration.h"
#include "pipesched/Scheduling/Partition.h"
#include "pipesched/Transforms/CostFile.h"
#include "pipesched/Transforms/LayerFile.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

using namespace pipesched;

static void costs(llvm::StringRef text) {
  scheduling::MeasuredCosts measured;
  if (!parseCostFile(text, measured).empty())
    return;
  for (bool split : {false, true}) {
    if (split && measured.bwdWeight.empty())
      continue;
    scheduling::CalibratedCosts calibrated =
        scheduling::calibrate(measured, /*tickNs=*/1, split);
    (void)calibrated.verify(measured, split);
  }
}

static void layers(llvm::StringRef text, uint8_t selector) {
  LayerFile file;
  if (!parseLayerFile(text, file).empty())
    return;
  scheduling::PartitionProblem problem;
  // The exact partition is O(L^2 S): small files only, to stay fast.
  if (file.layers.size() > 256)
    return;
  problem.layers = std::move(file.layers);
  problem.inputBytes = file.inputBytes;
  problem.stages = 1 + (selector >> 1) % 8;
  if (!problem.check().empty())
    return;
  (void)scheduling::partitionLayers(problem);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] & 1)
    layers(text, data[0]);
  else
    costs(text);
  return 0;
}
