//===- ExportProgram.cpp - write per-rank programs as JSON ----------------===//
//
// Streams the document: no DOM is built, so programs of hundreds of
// thousands of ops are written in one pass. Each op is one compact JSON
// object on its own line, so a program reads (and diffs) line by line.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Transforms/Pipelines.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
class ProgramWriter {
public:
  ProgramWriter(StepOp step, llvm::raw_ostream &os)
      : step(step), os(os) {}
  void write();

private:
  static void writeOpTo(llvm::json::OStream &json, Operation *op);

  StepOp step;
  llvm::raw_ostream &os;
};
} // namespace

static void writeJob(llvm::json::OStream &json, StringRef name,
                     JobOpInterface job) {
  json.attribute("op", name);
  json.attribute("stage", job.getStageIndex());
  json.attribute("microbatch", job.getMicrobatchIndex());
  if (std::optional<int64_t> start = job.getStartTime())
    json.attribute("start", *start);
  if (std::optional<int64_t> end = job.getEndTime())
    json.attribute("end", *end);
}

void ProgramWriter::writeOpTo(llvm::json::OStream &json, Operation *op) {
  auto attr = [&](StringRef key, int64_t value) { json.attribute(key, value); };
  json.object([&] {
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ForwardOp o) { writeJob(json, "forward", o); })
        .Case([&](BackwardOp o) { writeJob(json, "backward", o); })
        .Case([&](BackwardWeightOp o) { writeJob(json, "backward_weight", o); })
        .Case<SendOp, RecvOp>([&](auto o) {
          json.attribute("op", isa<SendOp>(op) ? "send" : "recv");
          json.attribute("kind", stringifyTensorKind(o.getKind()));
          attr("stage", o.getStage());
          attr("microbatch", o.getMicrobatch());
          attr("peer", o.getPeer());
          attr("tag", o.getTag());
          attr("bytes", o.getBytes());
        })
        .Case<SendWeightsOp, FetchWeightsOp>([&](auto o) {
          json.attribute("op", isa<SendWeightsOp>(op) ? "send_weights"
                                                      : "fetch_weights");
          attr("stage", o.getStage());
          attr("peer", o.getPeer());
          attr("tag", o.getTag());
          attr("bytes", o.getBytes());
        })
        .Case([&](ReleaseWeightsOp o) {
          json.attribute("op", "release_weights");
          attr("stage", o.getStage());
        })
        .Case([&](AllReduceGradOp o) {
          json.attribute("op", "allreduce_grad");
          attr("stage", o.getStage());
          json.attributeArray("group", [&] {
            for (int64_t m : o.getMembers())
              json.value(m);
          });
        })
        .Case([&](ReduceGradOp o) {
          json.attribute("op", "reduce_grad");
          attr("stage", o.getStage());
          attr("root", o.getRoot());
          json.attributeArray("group", [&] {
            for (int64_t m : o.getMembers())
              json.value(m);
          });
        })
        .Case([&](OptimizerStepOp o) {
          json.attribute("op", "optimizer_step");
          attr("stage", o.getStage());
        })
        .Case([&](GroupOp o) {
          json.attribute("op", "group");
          json.attributeArray("ops", [&] {
            for (Operation &inner : o.getBody().front().without_terminator())
              writeOpTo(json, &inner);
          });
        });
  });
}

void ProgramWriter::write() {
  int64_t makespan = 0;
  step.walk([&](JobOpInterface job) {
    makespan = std::max(makespan, job.getEndTime().value_or(0));
  });
  // The header as one compact object, minus its closing brace, then the
  // ranks with one op per line.
  std::string header;
  llvm::raw_string_ostream headerOs(header);
  {
    llvm::json::OStream h(headerOs, 0);
    h.object([&] {
      h.attribute("format", "pipesched-program");
      h.attribute("version", kProgramFormatVersion);
      h.attribute("stages", step.getStages());
      h.attribute("microbatches", step.getMicrobatches());
      h.attribute("workers", step.getWorkers());
      h.attributeArray("stage_graph", [&] {
        if (StageGraphAttr graph = step.getStageGraphAttr())
          for (auto [src, dst] :
               llvm::zip(graph.getSources(), graph.getTargets()))
            h.array([&] {
              h.value(src);
              h.value(dst);
            });
      });
      h.attribute("split_backward", step.getCostOrDefault().isSplitBackward());
      CostAttr cost = step.getCostOrDefault();
      auto perStage = [&](StringRef key, Direction d) {
        h.attributeArray(key, [&] {
          for (int64_t s = 0; s < step.getStages(); ++s)
            h.value(cost.getDuration(s, d));
        });
      };
      h.attributeObject("cost", [&] {
        perStage("fwd", Direction::Forward);
        perStage("bwd", Direction::Backward);
        perStage("bwd_w", Direction::BackwardWeight);
        h.attribute("act_bytes", cost.getActBytes());
        h.attribute("weight_bytes", cost.getWeightBytes());
      });
      h.attribute("makespan", makespan);
    });
  }
  header.pop_back(); // the closing brace
  os << header << ",\n\"ranks\": [\n";
  bool firstRank = true;
  for (Operation &op : step.getBody().front()) {
    auto rank = cast<RankOp>(op);
    os << (firstRank ? "" : ",\n") << "{\"rank\": " << rank.getRank()
       << ", \"owns\": [";
    llvm::interleaveComma(rank.getOwns(), os);
    os << "], \"ops\": [\n";
    firstRank = false;
    bool firstOp = true;
    for (Operation &inner : rank.getBody().front()) {
      os << (firstOp ? "  " : ",\n  ");
      firstOp = false;
      llvm::json::OStream line(os, 0);
      writeOpTo(line, &inner);
    }
    os << "\n]}";
  }
  os << "\n]}";
}

LogicalResult pipesched::exportProgram(Operation *op, llvm::raw_ostream &os) {
  FailureOr<StepOp> single = getSingleStep(op);
  if (failed(single))
    return failure();
  StepOp step = *single;
  if (!step.isLowered()) {
    // A spec or a graph: lower it here with the default options, verifying
    // once at the end rather than after every pass (the one-process path
    // from a spec to a program).
    PassManager pm(op->getContext(), op->getName().getStringRef());
    pm.enableVerifier(false);
    buildLowerPipeline(pm, LowerOptions());
    if (failed(pm.run(op)) || failed(verify(op)))
      return failure();
  }
  ProgramWriter(step, os).write();
  os << "\n";
  return success();
}

void pipesched::registerExportProgram() {
  TranslateFromMLIRRegistration registration(
      "sched-to-program",
      "write the rank programs of a lowered step (docs/program-format.md)",
      [](Operation *op, llvm::raw_ostream &os) { return exportProgram(op, os); },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
