//===- ExportTorchCSV.cpp - write a torch.distributed.pipelining CSV ------===//
//
// One row per worker: its jobs in `order`, as `<stage><F|B|I|W><microbatch>`.
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
  for (SmallVector<Entry> &row : rows) {
    llvm::sort(row, [](const Entry &a, const Entry &b) {
      return a.order < b.order;
    });
    std::optional<int64_t> freeAt = 0;
    bool first = true;
    for (Entry &e : row) {
      if (!first)
        os << ',';
      first = false;
      if (e.start && freeAt && *e.start > *freeAt)
        os << ',';
      os << e.job.getStageIndex() << actionKind(e.job.getDirection(), split)
         << e.job.getMicrobatchIndex();
      freeAt = e.end;
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
