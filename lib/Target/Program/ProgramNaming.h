//===- ProgramNaming.h - tensor ids and headers of programs -----*- C++ -*-===//
//
// What the writer of programs (PlanWriter.h) derives from a step or a
// lowered program: the header and the tensors a compute op reads and
// writes (Schema.h's roles).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_LIB_TARGET_PROGRAM_PROGRAMNAMING_H
#define PIPESCHED_LIB_TARGET_PROGRAM_PROGRAMNAMING_H

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Target/ProgramEncoder.h"

namespace pipesched {

/// The header of a program with these fields (a step's, or a
/// `sched.program`'s, which copies them).
ProgramHeader makeProgramHeader(int64_t stages, int64_t microbatches,
                                int64_t workers, sched::StageGraphAttr graph,
                                sched::TiedAttr tied, sched::CostAttr cost,
                                std::optional<llvm::ArrayRef<int64_t>> layers,
                                int64_t makespan,
                                std::optional<int64_t> replayed,
                                int64_t scanTensors);

/// The schema's op kind of a job op (forward, ..., combine).
program::OpKind jobKind(mlir::Operation *job);

/// Tensor ids by role, for one step's stage graph.
class TensorNaming {
public:
  template <typename StepLike>
  explicit TensorNaming(StepLike step)
      : microbatches(step.getMicrobatches()) {
    int64_t stages = step.getStages();
    preds.resize(stages);
    succs.resize(stages);
    for (int64_t s = 0; s < stages; ++s) {
      step.getStagePreds(s, preds[s]);
      step.getStageSuccs(s, succs[s]);
    }
  }
  int64_t id(program::TensorKind kind, int64_t stage,
             int64_t microbatch) const {
    return program::tensorId(kind, stage, microbatch, microbatches);
  }
  /// The output of job (s, b), a forward's or a backward's.
  int64_t output(bool forward, int64_t stage, int64_t microbatch) const {
    return id(forward ? program::TensorKind::Act : program::TensorKind::Grad,
              stage, microbatch);
  }
  /// Whether `job` is a weight half that reads what its backward read
  /// (BackwardWeightOp::rereadsBackward).
  static bool rereadsBackward(mlir::Operation *job) {
    auto weightHalf = llvm::dyn_cast<sched::BackwardWeightOp>(job);
    return weightHalf && weightHalf.rereadsBackward();
  }
  /// What the backward of (s, b) reads (its weight-gradient half too).
  void backwardReads(int64_t s, int64_t b,
                     llvm::SmallVectorImpl<int64_t> &ids) const;
  /// Writes a compute op whose reads are known: its writes follow from
  /// its kind (`scanTensor`: the id a scan job makes).
  void writeJob(ProgramEncoder &out, program::OpKind kind,
                sched::JobOpInterface job, int64_t stage, int64_t microbatch,
                llvm::ArrayRef<int64_t> reads, int64_t scanTensor,
                std::optional<int64_t> start,
                std::optional<int64_t> end) const;

private:
  int64_t microbatches;
  llvm::SmallVector<llvm::SmallVector<int64_t, 2>> preds, succs;
};

} // namespace pipesched

#endif // PIPESCHED_LIB_TARGET_PROGRAM_PROGRAMNAMING_H
