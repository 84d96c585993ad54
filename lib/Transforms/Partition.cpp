//===- Partition.cpp - group a model's layers into the step's stages ------===//
//
// Reads a layer file (LayerFile.h) into the dialect-free
// scheduling::PartitionProblem, checks it, partitions, verifies the result
// and writes it back: the per-stage cost and the step's `layers`.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/Partition.h"
#include "pipesched/Transforms/LayerFile.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/StepPhases.h"

#include <algorithm>

namespace pipesched {
#define GEN_PASS_DEF_SCHEDPARTITION
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
struct SchedPartition : pipesched::impl::SchedPartitionBase<SchedPartition> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

LogicalResult pipesched::partitionStep(StepOp step, const LayerFile &file,
                                      StringRef fileName,
                                      int64_t memoryLimitBytes,
                                      scheduling::PartitionMethod method) {
  auto refuse = [&](const llvm::Twine &why) {
    return step.emitOpError()
           << "cannot partition with '" << fileName << "': " << why;
  };
  if (!step.isSpec())
    return refuse("the step already holds jobs: partition a spec, before "
                  "--sched-expand");
  if (step.getStageGraphAttr())
    return refuse("the step has a stage graph; partitioning splits a chain "
                  "of layers");
  CostAttr old = step.getCostOrDefault();
  if (!old.getFwdBwd().empty() || old.getOptimizer().size() > 1)
    return refuse("the cost has per-stage figures the layers cannot give "
                  "(fwd_bwd, a list of optimizer steps)");
  if (memoryLimitBytes < 0)
    return refuse("memory-limit-bytes must not be negative");
  bool split = old.isSplitBackward();
  if (split && !file.splitBackward)
    return refuse("the step splits its backward (bwd_w) but the layers give "
                  "no 'bwd_w'");

  scheduling::PartitionProblem problem;
  problem.layers = file.layers;
  problem.stages = step.getStages();
  problem.inputBytes = file.inputBytes;
  problem.microbatches = step.getMicrobatches();
  if (memoryLimitBytes > 0)
    problem.memoryLimitBytes = memoryLimitBytes;
  if (std::string error = problem.check(); !error.empty())
    return refuse(error);
  scheduling::PartitionResult result =
      method == scheduling::PartitionMethod::Uniform
          ? scheduling::uniformPartition(problem)
          : scheduling::partitionLayers(problem);
  if (!result.ok())
    return refuse(result.error);
  const scheduling::Partition &part = result.partition;
  if (std::string error = part.verify(problem); !error.empty())
    return refuse("the partition is invalid: " + error);

  // A whole backward computes both halves.
  SmallVector<int64_t> bwd(part.bwd.begin(), part.bwd.end());
  SmallVector<int64_t> bwdWeight;
  if (split)
    bwdWeight.assign(part.bwdWeight.begin(), part.bwdWeight.end());
  else
    for (auto [b, w] : llvm::zip(bwd, part.bwdWeight))
      b += w;
  // The cost's scalar sizes: the largest over the stages (the activation
  // each receives, stage 0 the file's input; each one's weights).
  int64_t act = *llvm::max_element(part.inputBytes);
  int64_t weights = *llvm::max_element(part.weightBytes);
  step.setCostAttr(CostAttr::get(
      step.getContext(), part.fwd, bwd, bwdWeight, act, weights,
      /*fwdBwd=*/{}, old.getTransfer(), old.getTickNs(), old.getLatency(),
      old.getBandwidth(), old.getOptimizer(), old.getReduce(),
      /*actWBytes=*/-1));
  step.setLayersAttr(DenseI64ArrayAttr::get(
      step.getContext(), part.layerCounts(int64_t(problem.layers.size()))));
  return success();
}

void SchedPartition::runOnOperation() {
  StepOp step = getOperation();
  if (layers.empty()) {
    step.emitOpError("cannot partition without a layer file: "
                     "--sched-partition=layers=FILE");
    return signalPassFailure();
  }
  LayerFile file;
  if (std::string error = readLayerFile(layers, file); !error.empty()) {
    step.emitOpError() << "cannot partition with '" << layers
                       << "': " << error;
    return signalPassFailure();
  }
  if (failed(partitionStep(step, file, layers, memoryLimitBytes, partition)))
    signalPassFailure();
}
