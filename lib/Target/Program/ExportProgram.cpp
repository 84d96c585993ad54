//===- ExportProgram.cpp - write per-rank programs as JSON ----------------===//
//
// Serializes a lowered step in the format of pipesched/Program/Schema.h (the
// header the runtime's loader reads too). It streams the document: no DOM
// is built, so programs of millions of ops are written in one pass, one
// compact JSON object per op and per line (a program reads and diffs line by
// line). Every tensor an op reads or writes is named by the id of the schema,
// derived from the op's SSA operands: the data edges reach the runtime.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Program/Schema.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace schema = pipesched::program;

namespace {
StringRef str(std::string_view s) { return StringRef(s.data(), s.size()); }

class ProgramWriter {
public:
  explicit ProgramWriter(ProgramOp step)
      : step(step), microbatches(step.getMicrobatches()) {
    int64_t stages = step.getStages();
    preds.resize(stages);
    succs.resize(stages);
    for (int64_t s = 0; s < stages; ++s) {
      step.getStagePreds(s, preds[s]);
      step.getStageSuccs(s, succs[s]);
    }
    numberScanTensors();
  }
  void write(llvm::raw_ostream &os);

private:
  void writeHeader(llvm::json::OStream &json);
  void writeOp(llvm::json::OStream &json, Operation *op);
  void writeJob(llvm::json::OStream &json, schema::OpKind kind,
                JobOpInterface job);
  void writeTensors(llvm::json::OStream &json, std::string_view key,
                    llvm::ArrayRef<int64_t> ids);

  int64_t id(schema::TensorKind kind, int64_t stage, int64_t microbatch) const {
    return schema::tensorId(kind, stage, microbatch, microbatches);
  }
  /// The tensor a value of a rank program holds.
  int64_t tensorOf(Value value) const;
  /// What the backward of (s, b) reads (its weight-gradient half too).
  void backwardReads(int64_t s, int64_t b, SmallVectorImpl<int64_t> &ids) const;
  /// Numbers the outputs of the scan jobs in program order, after the act
  /// and grad ids, and the scan tensors each message carries (by tag).
  void numberScanTensors();

  ProgramOp step;
  int64_t microbatches;
  SmallVector<SmallVector<int64_t, 2>> preds, succs;
  SmallVector<int64_t, 8> scratch;
  /// Scan tensor ids: by the job that makes it, and by message tag.
  llvm::DenseMap<Operation *, int64_t> scanTensor;
  llvm::DenseMap<int64_t, int64_t> scanTensorOfTag;
};
} // namespace

void ProgramWriter::numberScanTensors() {
  int64_t next = schema::tensorCount(step.getStages(), microbatches);
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
    return id(recv.getKind() == TensorKind::Activation ? schema::TensorKind::Act
                                                       : schema::TensorKind::Grad,
              recv.getStage(), recv.getMicrobatch());
  }
  if (auto made = scanTensor.find(def); made != scanTensor.end())
    return made->second;
  auto job = cast<JobOpInterface>(def);
  return id(job.getDirection() == Direction::Forward ? schema::TensorKind::Act
                                                     : schema::TensorKind::Grad,
            job.getStageIndex(), job.getMicrobatchIndex());
}

void ProgramWriter::backwardReads(int64_t s, int64_t b,
                                  SmallVectorImpl<int64_t> &ids) const {
  if (succs[s].empty())
    ids.push_back(id(schema::TensorKind::Act, s, b));
  for (int64_t t : succs[s])
    ids.push_back(id(schema::TensorKind::Grad, t, b));
  for (int64_t p : preds[s])
    ids.push_back(id(schema::TensorKind::Act, p, b));
}

void ProgramWriter::writeTensors(llvm::json::OStream &json,
                                 std::string_view key,
                                 llvm::ArrayRef<int64_t> ids) {
  json.attributeArray(str(key), [&] {
    for (int64_t i : ids)
      json.value(i);
  });
}

void ProgramWriter::writeJob(llvm::json::OStream &json, schema::OpKind kind,
                             JobOpInterface job) {
  int64_t s = job.getStageIndex(), b = job.getMicrobatchIndex();
  json.attribute(str(schema::fieldName(schema::kOp)),
                 str(schema::opName(kind)));
  json.attribute(str(schema::fieldName(schema::kStage)), s);
  json.attribute(str(schema::fieldName(schema::kMicrobatch)), b);
  // Forward and backward read their SSA operands; the weight-gradient half
  // has only an ordering edge to its backward and re-reads what it read.
  // A scanned backward's weight gradient reads its operands.
  scratch.clear();
  auto weightHalf = dyn_cast<BackwardWeightOp>(job.getOperation());
  if (weightHalf && !weightHalf.getGrad())
    backwardReads(s, b, scratch);
  else
    for (Value operand : job->getOperands())
      scratch.push_back(tensorOf(operand));
  writeTensors(json, schema::fieldName(schema::kReads), scratch);
  scratch.clear();
  if (kind == schema::OpKind::Forward)
    scratch.push_back(id(schema::TensorKind::Act, s, b));
  else if (kind == schema::OpKind::Backward && !preds[s].empty())
    scratch.push_back(id(schema::TensorKind::Grad, s, b));
  else if (schema::isScan(kind))
    scratch.push_back(scanTensor.lookup(job.getOperation()));
  writeTensors(json, schema::fieldName(schema::kWrites), scratch);
  if (auto combine = dyn_cast<CombineOp>(job.getOperation()))
    json.attribute(str(schema::fieldName(schema::kProduct)),
                   stringifyProduct(combine.getProduct()));
  if (std::optional<int64_t> start = job.getStartTime())
    json.attribute(str(schema::fieldName(schema::kStart)), *start);
  if (std::optional<int64_t> end = job.getEndTime())
    json.attribute(str(schema::fieldName(schema::kEnd)), *end);
}

void ProgramWriter::writeOp(llvm::json::OStream &json, Operation *op) {
  using schema::OpKind;
  auto field = [&](schema::Field f, int64_t value) {
    json.attribute(str(schema::fieldName(f)), value);
  };
  auto name = [&](OpKind kind) {
    json.attribute(str(schema::fieldName(schema::kOp)),
                   str(schema::opName(kind)));
  };
  auto members = [&](ArrayRef<int64_t> ranks) {
    json.attributeArray(str(schema::fieldName(schema::kMembers)), [&] {
      for (int64_t m : ranks)
        json.value(m);
    });
  };
  json.object([&] {
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ForwardOp o) { writeJob(json, OpKind::Forward, o); })
        .Case([&](BackwardOp o) { writeJob(json, OpKind::Backward, o); })
        .Case([&](BackwardWeightOp o) {
          writeJob(json, OpKind::BackwardWeight, o);
        })
        .Case([&](LossGradOp o) { writeJob(json, OpKind::LossGrad, o); })
        .Case([&](JacobianOp o) { writeJob(json, OpKind::Jacobian, o); })
        .Case([&](CombineOp o) { writeJob(json, OpKind::Combine, o); })
        .Case([&](SendOp o) {
          name(OpKind::Send);
          int64_t sent = tensorOf(o.getValue());
          writeTensors(json, schema::fieldName(schema::kReads), sent);
          field(schema::kPeer, o.getPeer());
          field(schema::kTag, o.getTag());
          field(schema::kBytes, o.getBytes());
        })
        .Case([&](RecvOp o) {
          name(OpKind::Recv);
          int64_t received = tensorOf(o.getOutput());
          writeTensors(json, schema::fieldName(schema::kWrites), received);
          field(schema::kPeer, o.getPeer());
          field(schema::kTag, o.getTag());
          field(schema::kBytes, o.getBytes());
        })
        .Case<SendWeightsOp, FetchWeightsOp>([&](auto o) {
          name(isa<SendWeightsOp>(op) ? OpKind::SendWeights
                                      : OpKind::FetchWeights);
          field(schema::kStage, o.getStage());
          field(schema::kPeer, o.getPeer());
          field(schema::kTag, o.getTag());
          field(schema::kBytes, o.getBytes());
        })
        .Case([&](ReleaseWeightsOp o) {
          name(OpKind::ReleaseWeights);
          field(schema::kStage, o.getStage());
        })
        .Case([&](AllReduceGradOp o) {
          name(OpKind::AllreduceGrad);
          field(schema::kStage, o.getStage());
          members(o.getMembers());
          field(schema::kBytes, o.getBytes());
        })
        .Case([&](ReduceGradOp o) {
          name(OpKind::ReduceGrad);
          field(schema::kStage, o.getStage());
          field(schema::kRoot, o.getRoot());
          members(o.getMembers());
          field(schema::kBytes, o.getBytes());
        })
        .Case([&](OptimizerStepOp o) {
          name(OpKind::OptimizerStep);
          field(schema::kStage, o.getStage());
        })
        .Case([&](TiedGradOp o) {
          name(OpKind::TiedGrad);
          field(schema::kTie, o.getTie());
          members(o.getMembers());
          field(schema::kBytes, o.getBytes());
        })
        .Case([&](GroupOp o) {
          name(OpKind::Group);
          json.attributeArray(str(schema::fieldName(schema::kOps)), [&] {
            for (Operation &inner : o.getBody().front().without_terminator())
              writeOp(json, &inner);
          });
        });
  });
}

void ProgramWriter::writeHeader(llvm::json::OStream &h) {
  namespace top = schema::top;
  CostAttr cost = step.getCost();
  int64_t stages = step.getStages();
  int64_t makespan = step.getMakespan();
  h.attribute(str(top::kFormatField), str(schema::kFormat));
  h.attribute(str(top::kVersion), schema::kVersion);
  h.attribute(str(top::kStages), stages);
  h.attribute(str(top::kMicrobatches), microbatches);
  h.attribute(str(top::kWorkers), step.getWorkers());
  // Always explicit: an empty list means independent stages. In the step's
  // own edge order: the runtime sums fan-in activations and fan-out
  // gradients in edge order, and the reads written below list a stage's
  // predecessors and successors in that order (grouping the edges by
  // destination reordered the successors of a stage with several).
  auto edge = [&](int64_t src, int64_t dst) {
    h.array([&] {
      h.value(src);
      h.value(dst);
    });
  };
  h.attributeArray(str(top::kStageGraph), [&] {
    if (StageGraphAttr graph = step.getStageGraphAttr()) {
      for (auto [src, dst] : llvm::zip(graph.getSources(), graph.getTargets()))
        edge(src, dst);
    } else {
      for (int64_t s = 0; s + 1 < stages; ++s)
        edge(s, s + 1);
    }
  });
  // Optional: written only where the step ties weights (older readers).
  if (TiedAttr tied = step.getTiedAttr())
    h.attributeArray(str(top::kTied), [&] {
      for (ArrayRef<int64_t> group : tied.getGroups())
        h.array([&] {
          for (int64_t s : group)
            h.value(s);
        });
    });
  h.attribute(str(top::kSplitBackward), cost.isSplitBackward());
  auto perStage = [&](std::string_view key, Direction d) {
    h.attributeArray(str(key), [&] {
      for (int64_t s = 0; s < stages; ++s)
        h.value(cost.getDuration(s, d));
    });
  };
  h.attributeObject(str(top::kCost), [&] {
    perStage(schema::cost::kFwd, Direction::Forward);
    perStage(schema::cost::kBwd, Direction::Backward);
    perStage(schema::cost::kBwdW, Direction::BackwardWeight);
    h.attribute(str(schema::cost::kActBytes), cost.getActBytes());
    h.attribute(str(schema::cost::kWeightBytes), cost.getWeightBytes());
    // Optional: written only where the cost has them (older readers).
    if (cost.getTransfer())
      h.attribute(str(schema::cost::kTransfer), cost.getTransfer());
    if (cost.hasTimeUnit())
      h.attribute(str(schema::cost::kTickNs), cost.getTickNs());
  });
  h.attribute(str(top::kMakespan), makespan);
  if (std::optional<int64_t> replayed = step.getReplayed())
    h.attribute(str(top::kReplayedMakespan), *replayed);
  if (!scanTensor.empty())
    h.attribute(str(top::kScanTensors), int64_t(scanTensor.size()));
  if (std::optional<ArrayRef<int64_t>> layers = step.getLayers())
    h.attributeArray(str(top::kLayers), [&] {
      for (int64_t count : *layers)
        h.value(count);
    });
}

void ProgramWriter::write(llvm::raw_ostream &os) {
  // The header as one compact object, minus its closing brace, then the
  // ranks with one op per line.
  std::string header;
  llvm::raw_string_ostream headerOs(header);
  {
    llvm::json::OStream h(headerOs, 0);
    h.object([&] { writeHeader(h); });
  }
  header.pop_back(); // the closing brace
  os << header << ",\n\"" << str(schema::top::kRanks) << "\": [\n";
  bool firstRank = true;
  for (Operation &op : step.getBody().front()) {
    auto rank = cast<RankOp>(op);
    os << (firstRank ? "" : ",\n") << "{\"" << str(schema::rank::kRank)
       << "\": " << rank.getRank() << ", \"" << str(schema::rank::kOwns)
       << "\": [";
    llvm::interleaveComma(rank.getOwns(), os);
    os << "], \"" << str(schema::rank::kOps) << "\": [\n";
    firstRank = false;
    bool firstOp = true;
    for (Operation &inner : rank.getBody().front()) {
      os << (firstOp ? "  " : ",\n  ");
      firstOp = false;
      llvm::json::OStream line(os, 0);
      writeOp(line, &inner);
    }
    os << "\n]}";
  }
  os << "\n]}";
}

LogicalResult pipesched::exportProgram(Operation *op, llvm::raw_ostream &os,
                                      bool verify) {
  // A translation serializes; compiling is a separate, explicit step.
  FailureOr<ProgramOp> program = getSingleProgram(op);
  if (failed(program))
    return failure();
  // A program written by hand (or edited) is proven before it is written:
  // the runtime would refuse it anyway, later and with less context.
  if (verify && failed(verifyDeadlockFree(*program)))
    return failure();
  ProgramWriter(*program).write(os);
  os << "\n";
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
