//===- ExportTorchCSV.cpp - write a torch.distributed.pipelining CSV ------===//
//
// One row per worker: its jobs in `order`, as `<stage><F|B|I|W><microbatch>`,
// an overlapped pair as `(xF;yB)OVERLAP_F_B`.
// When the step was simulated, an empty cell marks each wait: a job that
// starts after the worker's previous job ended.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/TorchCSV.h"

#include "pipesched/Dialect/Sched/SchedOps.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

static char actionKind(Direction d, bool split) {
  switch (d) {
  case Direction::Forward:
    return 'F';
  case Direction::Backward:
    return split ? 'I' : 'B';
  case Direction::BackwardWeight:
    return 'W';
  }
  llvm_unreachable("unknown direction");
}

LogicalResult pipesched::exportTorchCSV(Operation *op, llvm::raw_ostream &os) {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (!programs.empty())
    return programs.front().emitOpError("holds rank programs: export them "
                                        "with --sched-to-program");
  FailureOr<StepOp> single = getSingleStep(op);
  if (failed(single))
    return failure();
  StepOp step = *single;
  if (step.isSpec())
    return step.emitOpError("has no jobs to export: run --sched-expand, "
                            "--sched-place and --sched-simulate first");
  bool split = step.getCostOrDefault().isSplitBackward();

  struct Entry {
    int64_t order;
    std::optional<int64_t> start, end;
    JobOpInterface job;
  };
  SmallVector<SmallVector<Entry>> rows(step.getWorkers());
  // torch places each stage on one rank (_validate_schedule infers the
  // stage-to-rank map from the CSV): a stage spread over workers (DDP,
  // FSDP, looped pipelines with several groups) has no torch CSV.
  SmallVector<std::optional<int64_t>> stageWorker(step.getStages());
  for (Operation &o : step.getBody().front()) {
    auto job = dyn_cast<JobOpInterface>(o);
    if (!job)
      continue; // communication: torch's compute-only form omits it
    std::optional<int64_t> worker = job.getComputeWorker(),
                           order = job.getOrderIndex();
    if (!worker || !order)
      return job->emitOpError()
             << describeJob(job)
             << " has no worker order: run --sched-simulate first";
    std::optional<int64_t> &owner = stageWorker[job.getStageIndex()];
    if (owner && *owner != *worker)
      return job->emitOpError()
             << "cannot be written as a torch CSV schedule: stage "
             << job.getStageIndex() << " runs on workers " << *owner
             << " and " << *worker
             << ", and torch places each stage on one rank";
    owner = *worker;
    rows[*worker].push_back(
        {*order, job.getStartTime(), job.getEndTime(), job});
  }
  auto action = [&](JobOpInterface job) {
    std::string text = std::to_string(job.getStageIndex());
    auto backward = dyn_cast<BackwardOp>(job.getOperation());
    text += backward && backward.getWhole()
                ? 'B'
                : actionKind(job.getDirection(), split);
    return text + std::to_string(job.getMicrobatchIndex());
  };
  for (SmallVector<Entry> &row : rows) {
    llvm::sort(row, [](const Entry &a, const Entry &b) {
      return a.order < b.order;
    });
    std::optional<int64_t> freeAt = 0;
    bool first = true;
    for (size_t k = 0; k < row.size(); ++k) {
      Entry &e = row[k];
      if (!first)
        os << ',';
      first = false;
      if (e.start && freeAt && *e.start > *freeAt)
        os << ',';
      // A whole backward in a split step is torch's `B`: its weight half
      // (next in the order) is part of it.
      auto wholeAt = [&](size_t i) {
        auto backward = dyn_cast<BackwardOp>(row[i].job.getOperation());
        return backward && backward.getWhole() && i + 1 < row.size() &&
               row[i + 1].job.getDirection() == Direction::BackwardWeight;
      };
      auto forward = dyn_cast<ForwardOp>(e.job.getOperation());
      if (forward && forward.getOverlapped() && k + 1 < row.size()) {
        os << '(' << action(e.job) << ';' << action(row[k + 1].job)
           << ")OVERLAP_F_B";
        k += wholeAt(k + 1) ? 2 : 1;
      } else {
        os << action(e.job);
        if (wholeAt(k))
          ++k;
      }
      freeAt = row[k].end;
    }
    os << '\n';
  }
  return success();
}

void pipesched::registerExportTorchCSV() {
  TranslateFromMLIRRegistration registration(
      "sched-to-torch-csv",
      "write each worker's compute order as a torch.distributed.pipelining "
      "CSV schedule",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportTorchCSV(op, os);
      },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
