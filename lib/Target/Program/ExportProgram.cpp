//===- ExportProgram.cpp - write the rank programs of lowered IR ----------===//
//
// Serializes a `sched.program` through the encoder (ProgramEncoder.h) in
// the format of pipesched/Program/Schema.h, the header the runtime's loader
// reads too. Every tensor an op reads or writes is named by the id of the
// schema, derived from the op's SSA operands: the data edges reach the
// runtime.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "ProgramNaming.h"

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Program/Schema.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace schema = pipesched::program;

namespace {
/// Walks a `sched.program`'s rank IR into the encoder. Every tensor an op
/// reads or writes is named by the id of the schema, derived from the op's
/// SSA operands: the data edges reach the runtime.
class ProgramWriter {
public:
  explicit ProgramWriter(ProgramOp step) : step(step), naming(step) {
    numberScanTensors();
  }
  void write(ProgramEncoder &out);

private:
  void writeOp(ProgramEncoder &out, Operation *op);
  /// The tensor a value of a rank program holds.
  int64_t tensorOf(Value value) const;
  /// Numbers the outputs of the scan jobs in program order, after the act
  /// and grad ids, and the scan tensors each message carries (by tag).
  void numberScanTensors();

  ProgramOp step;
  TensorNaming naming;
  SmallVector<int64_t, 8> scratch;
  /// Scan tensor ids: by the job that makes it, and by message tag.
  llvm::DenseMap<Operation *, int64_t> scanTensor;
  llvm::DenseMap<int64_t, int64_t> scanTensorOfTag;
};
} // namespace

void ProgramWriter::numberScanTensors() {
  int64_t next =
      schema::tensorCount(step.getStages(), step.getMicrobatches());
  step.walk([&](Operation *op) {
    if (isa<LossGradOp, JacobianOp, CombineOp>(op))
      scanTensor[op] = next++;
  });
  step.walk([&](SendOp send) {
    if (send.getKind() == TensorKind::Scan)
      scanTensorOfTag[send.getTag()] = tensorOf(send.getValue());
  });
}

int64_t ProgramWriter::tensorOf(Value value) const {
  Operation *def = value.getDefiningOp();
  if (auto group = dyn_cast<GroupOp>(def)) {
    auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
    return tensorOf(yield.getValues()[cast<OpResult>(value).getResultNumber()]);
  }
  if (auto recv = dyn_cast<RecvOp>(def)) {
    if (recv.getKind() == TensorKind::Scan) // verified: a send has the tag
      return scanTensorOfTag.lookup(recv.getTag());
    return naming.id(recv.getKind() == TensorKind::Activation
                         ? schema::TensorKind::Act
                         : schema::TensorKind::Grad,
                     recv.getStage(), recv.getMicrobatch());
  }
  if (auto made = scanTensor.find(def); made != scanTensor.end())
    return made->second;
  auto job = cast<JobOpInterface>(def);
  return naming.output(job.getDirection() == Direction::Forward,
                       job.getStageIndex(),
                       job.getMicrobatchIndex());
}

void ProgramWriter::writeOp(ProgramEncoder &out, Operation *op) {
  if (auto job = dyn_cast<JobOpInterface>(op)) {
    int64_t s = job.getStageIndex(), b = job.getMicrobatchIndex();
    // Forward and backward read their SSA operands; the weight-gradient
    // half has only an ordering edge to its backward and re-reads what it
    // read. A scanned backward's weight gradient reads its operands.
    scratch.clear();
    if (TensorNaming::rereadsBackward(op))
      naming.backwardReads(s, b, scratch);
    else
      for (Value operand : op->getOperands())
        scratch.push_back(tensorOf(operand));
    naming.writeJob(out, jobKind(op), job, s, b, scratch,
                    scanTensor.lookup(op), job.getStartTime(),
                    job.getEndTime());
    return;
  }
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SendOp o) {
        out.send(tensorOf(o.getValue()), o.getPeer(), o.getTag(),
                 o.getBytes());
      })
      .Case([&](RecvOp o) {
        out.recv(tensorOf(o.getOutput()), o.getPeer(), o.getTag(),
                 o.getBytes());
      })
      .Case([&](SendWeightsOp o) {
        out.weights(true, o.getStage(), o.getPeer(), o.getTag(), o.getBytes());
      })
      .Case([&](FetchWeightsOp o) {
        out.weights(false, o.getStage(), o.getPeer(), o.getTag(),
                    o.getBytes());
      })
      .Case([&](ReleaseWeightsOp o) { out.releaseWeights(o.getStage()); })
      .Case([&](AllReduceGradOp o) {
        out.allReduceGrad(o.getStage(), o.getMembers(), o.getBytes());
      })
      .Case([&](ReduceGradOp o) {
        out.reduceGrad(o.getStage(), o.getRoot(), o.getMembers(),
                       o.getBytes());
      })
      .Case([&](OptimizerStepOp o) { out.optimizerStep(o.getStage()); })
      .Case([&](TiedGradOp o) {
        out.tiedGrad(o.getTie(), o.getMembers(), o.getBytes());
      })
      .Case([&](GroupOp o) {
        out.beginGroup();
        for (Operation &inner : o.getBody().front().without_terminator())
          writeOp(out, &inner);
        out.endGroup();
      });
}

void ProgramWriter::write(ProgramEncoder &out) {
  std::optional<ArrayRef<int64_t>> layers;
  if (step.getLayers())
    layers = *step.getLayers();
  out.begin(makeProgramHeader(
      step.getStages(), step.getMicrobatches(), step.getWorkers(),
      step.getStageGraphAttr(), step.getTiedAttr(), step.getCost(), layers,
      step.getMakespan(), step.getReplayed(), int64_t(scanTensor.size())));
  for (Operation &op : step.getBody().front()) {
    auto rank = cast<RankOp>(op);
    out.beginRank(rank.getRank(), rank.getOwns());
    for (Operation &inner : rank.getBody().front())
      writeOp(out, &inner);
    out.endRank();
  }
}

LogicalResult pipesched::exportProgram(Operation *op, llvm::raw_ostream &os,
                                      bool verify) {
  ProgramEncoder out = ProgramEncoder::toStream(os, program::Encoding::Json);
  return exportProgram(op, out, verify);
}

LogicalResult pipesched::exportProgram(Operation *op, ProgramEncoder &out,
                                      bool verify) {
  // A translation serializes; compiling is a separate, explicit step.
  FailureOr<ProgramOp> program = getSingleProgram(op);
  if (failed(program))
    return failure();
  // A program written by hand (or edited) is proven before it is written:
  // the runtime would refuse it anyway, later and with less context.
  if (verify && failed(verifyDeadlockFree(*program)))
    return failure();
  ProgramWriter(*program).write(out);
  if (llvm::Error error = out.finish()) {
    program->emitError() << llvm::toString(std::move(error));
    return failure();
  }
  return success();
}

void pipesched::registerExportProgram() {
  TranslateFromMLIRRegistration registration(
      "sched-to-program",
      "write the rank programs of a lowered step (docs/program-format.md)",
      [](Operation *op, llvm::raw_ostream &os) {
        // The message is located; printing the whole step would bury it.
        op->getContext()->printOpOnDiagnostic(false);
        return exportProgram(op, os);
      },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
