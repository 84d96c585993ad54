//===- ProgramNaming.cpp - tensor ids and headers of programs -------------===//

#include "ProgramNaming.h"

#include "pipesched/Program/Roles.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace schema = pipesched::program;

ProgramHeader pipesched::makeProgramHeader(
    int64_t stages, int64_t microbatches, int64_t workers,
    StageGraphAttr graph, TiedAttr tied, CostAttr cost,
    std::optional<ArrayRef<int64_t>> layers, int64_t makespan,
    std::optional<int64_t> replayed, int64_t scanTensors) {
  ProgramHeader h;
  h.stages = stages;
  h.microbatches = microbatches;
  h.workers = workers;
  // Always explicit: an empty list means independent stages.
  if (graph)
    for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
      h.stageGraph.push_back({src, dst});
  else
    for (int64_t s = 0; s + 1 < stages; ++s)
      h.stageGraph.push_back({s, s + 1});
  if (tied)
    for (ArrayRef<int64_t> group : tied.getGroups())
      h.tied.push_back(group.vec());
  h.splitBackward = cost.isSplitBackward();
  for (int64_t s = 0; s < stages; ++s) {
    h.fwd.push_back(cost.getDuration(s, Direction::Forward));
    h.bwd.push_back(cost.getDuration(s, Direction::Backward));
    h.bwdW.push_back(cost.getDuration(s, Direction::BackwardWeight));
  }
  h.actBytes = cost.getActBytes();
  h.weightBytes = cost.getWeightBytes();
  h.transfer = cost.getTransfer();
  if (cost.hasTimeUnit())
    h.tickNs = cost.getTickNs();
  h.makespan = makespan;
  h.replayed = replayed;
  h.scanTensors = scanTensors;
  if (layers)
    h.layers = layers->vec();
  return h;
}

schema::OpKind pipesched::jobKind(Operation *job) {
  using schema::OpKind;
  if (isa<ForwardOp>(job))
    return OpKind::Forward;
  if (isa<BackwardOp>(job))
    return OpKind::Backward;
  if (isa<BackwardWeightOp>(job))
    return OpKind::BackwardWeight;
  if (isa<LossGradOp>(job))
    return OpKind::LossGrad;
  if (isa<JacobianOp>(job))
    return OpKind::Jacobian;
  assert(isa<CombineOp>(job) && "not a job op");
  return OpKind::Combine;
}

void TensorNaming::backwardReads(int64_t s, int64_t b,
                                 SmallVectorImpl<int64_t> &ids) const {
  schema::forEachRole(schema::OpKind::Backward, /*scanned=*/false,
                      /*reads=*/true, s, b, microbatches, preds[s], succs[s],
                      [&](int64_t tensor) { ids.push_back(tensor); });
}

void TensorNaming::writeJob(ProgramEncoder &out, schema::OpKind kind,
                            JobOpInterface job, int64_t s, int64_t b,
                            ArrayRef<int64_t> reads, int64_t scanTensor,
                            std::optional<int64_t> start,
                            std::optional<int64_t> end) const {
  SmallVector<int64_t, 1> writes;
  schema::forEachRole(kind, /*scanned=*/false, /*reads=*/false, s, b,
                      microbatches, preds[s], succs[s], [&](int64_t tensor) {
                        writes.push_back(tensor == schema::kAnyScanTensor
                                             ? scanTensor
                                             : tensor);
                      });
  std::string_view product;
  if (auto combine = dyn_cast<CombineOp>(job.getOperation())) {
    StringRef name = stringifyProduct(combine.getProduct());
    product = std::string_view(name.data(), name.size());
  }
  out.compute(kind, s, b, reads, writes, product, start, end);
}
