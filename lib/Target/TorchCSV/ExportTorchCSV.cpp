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

#include <set>
#include <tuple>

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

char pipesched::torchActionLetter(JobOpInterface job, bool split) {
  switch (job.getDirection()) {
  case Direction::Forward:
    return 'F';
  case Direction::Backward: {
    auto backward = dyn_cast<BackwardOp>(job.getOperation());
    return split && !(backward && backward.getWhole()) ? 'I' : 'B';
  }
  case Direction::BackwardWeight:
    return 'W';
  case Direction::Scan:
    return 0;
  }
  llvm_unreachable("unknown direction");
}

namespace {
/// A compute action of torch's grammar: `{stage}{F|I|B|W}{microbatch}`.
struct Action {
  char kind;
  int64_t stage, microbatch;
  bool operator<(const Action &o) const {
    return std::tie(kind, stage, microbatch) <
           std::tie(o.kind, o.stage, o.microbatch);
  }
};

/// One cell of a rank's compute row: an action, or an overlapped pair.
struct Cell {
  SmallVector<Action, 2> parts;
  std::optional<int64_t> start, end;
};

/// Each worker's compute cells in order, and the worker of each stage.
struct Rows {
  SmallVector<SmallVector<Cell>> cells;
  SmallVector<int64_t> stageWorker;
};
} // namespace

static void printAction(llvm::raw_ostream &os, const Action &a) {
  os << a.stage << a.kind << a.microbatch;
}

static void printCell(llvm::raw_ostream &os, const Cell &cell) {
  if (cell.parts.size() == 1)
    return printAction(os, cell.parts.front());
  os << '(';
  printAction(os, cell.parts[0]);
  os << ';';
  printAction(os, cell.parts[1]);
  os << ")OVERLAP_F_B";
}

/// The one simulated step in `op` (not rank programs, not a spec).
static FailureOr<StepOp> getSimulatedStep(Operation *op) {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (!programs.empty())
    return programs.front().emitOpError("holds rank programs: export them "
                                        "with --sched-to-program");
  FailureOr<StepOp> single = getSingleStep(op);
  if (failed(single))
    return failure();
  if (single->isSpec())
    return single->emitOpError("has no jobs to export: run --sched-expand, "
                               "--sched-place and --sched-simulate first");
  return single;
}

namespace {
struct Entry {
  int64_t order;
  JobOpInterface job;
};
} // namespace

/// One worker's jobs, in its order, as cells: an overlapped forward shares
/// its cell with the next job; a whole backward in a split step is torch's
/// `B`, its weight half (next in the order) part of it.
static SmallVector<Cell> cellsOf(SmallVector<Entry> &row, bool split) {
  llvm::sort(row, [](const Entry &a, const Entry &b) { return a.order < b.order; });
  auto actionOf = [&](JobOpInterface job) {
    return Action{torchActionLetter(job, split), job.getStageIndex(),
                  job.getMicrobatchIndex()};
  };
  auto wholeAt = [&](size_t i) {
    auto backward = dyn_cast<BackwardOp>(row[i].job.getOperation());
    return backward && backward.getWhole() && i + 1 < row.size() &&
           row[i + 1].job.getDirection() == Direction::BackwardWeight;
  };
  SmallVector<Cell> cells;
  for (size_t k = 0; k < row.size(); ++k) {
    Cell cell;
    cell.start = row[k].job.getStartTime();
    cell.parts.push_back(actionOf(row[k].job));
    auto forward = dyn_cast<ForwardOp>(row[k].job.getOperation());
    if (forward && forward.getOverlapped() && k + 1 < row.size())
      cell.parts.push_back(actionOf(row[++k].job));
    if (wholeAt(k))
      ++k;
    cell.end = row[k].job.getEndTime();
    cells.push_back(std::move(cell));
  }
  return cells;
}

/// Reads the simulated step in `op` as torch's compute rows.
static FailureOr<Rows> collectRows(Operation *op) {
  FailureOr<StepOp> simulated = getSimulatedStep(op);
  if (failed(simulated))
    return failure();
  StepOp step = *simulated;
  bool split = step.getCostOrDefault().isSplitBackward();
  SmallVector<SmallVector<Entry>> entries(step.getWorkers());
  // torch places each stage on one rank (_validate_schedule infers the
  // stage-to-rank map from the CSV): a stage spread over workers (DDP,
  // FSDP, looped pipelines with several groups) has no torch CSV.
  Rows rows;
  rows.stageWorker.assign(step.getStages(), -1);
  for (Operation &o : step.getBody().front()) {
    auto job = dyn_cast<JobOpInterface>(o);
    if (!job)
      continue;
    if (job.getDirection() == Direction::Scan)
      return job->emitOpError()
             << "cannot be written as a torch CSV schedule: torch has no "
                "action for a job of a scanned backward (BPPSA)";
    std::optional<int64_t> worker = job.getComputeWorker(),
                           order = job.getOrderIndex();
    if (!worker || !order)
      return job->emitOpError()
             << describeJob(job)
             << " has no worker order: run --sched-simulate first";
    int64_t &owner = rows.stageWorker[job.getStageIndex()];
    if (owner >= 0 && owner != *worker)
      return job->emitOpError()
             << "cannot be written as a torch CSV schedule: stage "
             << job.getStageIndex() << " runs on workers " << owner
             << " and " << *worker
             << ", and torch places each stage on one rank";
    owner = *worker;
    entries[*worker].push_back({*order, job});
  }
  rows.cells.resize(entries.size());
  for (auto [worker, row] : llvm::enumerate(entries))
    rows.cells[worker] = cellsOf(row, split);
  return rows;
}

LogicalResult pipesched::exportTorchCSV(Operation *op, llvm::raw_ostream &os) {
  FailureOr<Rows> rows = collectRows(op);
  if (failed(rows))
    return failure();
  for (const SmallVector<Cell> &row : rows->cells) {
    std::optional<int64_t> freeAt = 0;
    for (auto [k, cell] : llvm::enumerate(row)) {
      if (k)
        os << ',';
      if (cell.start && freeAt && *cell.start > *freeAt)
        os << ','; // an idle slot where the worker waits
      printCell(os, cell);
      freeAt = cell.end;
    }
    os << '\n';
  }
  return success();
}

/// torch's `_merge_bw`: an input half followed by its own weight half is
/// one whole backward, `B`.
static void mergeWeightHalves(SmallVector<Cell> &row) {
  SmallVector<Cell> merged;
  for (size_t k = 0; k < row.size(); ++k) {
    Cell &cell = row[k];
    if (cell.parts.size() == 1 && cell.parts[0].kind == 'I' &&
        k + 1 < row.size() && row[k + 1].parts.size() == 1) {
      const Action &next = row[k + 1].parts[0];
      if (next.kind == 'W' && next.stage == cell.parts[0].stage &&
          next.microbatch == cell.parts[0].microbatch) {
        cell.parts[0].kind = 'B';
        ++k;
      }
    }
    merged.push_back(cell);
  }
  row = std::move(merged);
}

/// torch's `compute_comms` form (schedules.py `_merge_bw`, then
/// `_add_send_recv`, of torch 00722e64): an input half followed by its
/// weight half becomes `B`; the ranks are walked round-robin, each placing
/// its next compute action once its inputs are there (a receive or a local
/// producer), followed by a send for each output another rank needs and
/// that rank's matching receive.
LogicalResult pipesched::exportTorchCommsCSV(Operation *op,
                                             llvm::raw_ostream &os) {
  FailureOr<Rows> rows = collectRows(op);
  if (failed(rows))
    return failure();
  int64_t numStages = rows->stageWorker.size();
  size_t numRanks = rows->cells.size();
  for (SmallVector<Cell> &row : rows->cells)
    mergeWeightHalves(row);

  // A communication action: {stage}{SEND_F|RECV_F|SEND_B|RECV_B}{microbatch}.
  using Comm = std::tuple<int64_t, StringRef, int64_t>;
  SmallVector<SmallVector<std::string>> out(numRanks);
  SmallVector<std::set<Action>> doneCompute(numRanks);
  SmallVector<std::set<Comm>> doneComm(numRanks);
  auto rankOf = [&](int64_t stage) { return rows->stageWorker[stage]; };
  auto ready = [&](size_t r, const Action &a) {
    if (a.kind == 'F' && a.stage != 0)
      return doneComm[r].count({a.stage, "RECV_F", a.microbatch}) ||
             doneCompute[r].count({'F', a.stage - 1, a.microbatch});
    if ((a.kind == 'I' || a.kind == 'B') && a.stage != numStages - 1)
      return doneComm[r].count({a.stage, "RECV_B", a.microbatch}) ||
             doneCompute[r].count({'I', a.stage + 1, a.microbatch}) ||
             doneCompute[r].count({'B', a.stage + 1, a.microbatch});
    return true;
  };
  auto text = [](int64_t stage, StringRef kind, int64_t microbatch) {
    return std::to_string(stage) + kind.str() + std::to_string(microbatch);
  };
  SmallVector<size_t> next(numRanks, 0);
  size_t remaining = 0;
  for (const SmallVector<Cell> &row : rows->cells)
    remaining += row.size();
  while (remaining > 0) {
    bool progress = false;
    for (size_t r = 0; r < numRanks; ++r) {
      if (next[r] == rows->cells[r].size())
        continue;
      const Cell &cell = rows->cells[r][next[r]];
      if (!llvm::all_of(cell.parts,
                        [&](const Action &a) { return ready(r, a); }))
        continue;
      std::string cellText;
      llvm::raw_string_ostream cellStream(cellText);
      printCell(cellStream, cell);
      out[r].push_back(cellText);
      for (const Action &a : cell.parts) {
        doneCompute[r].insert(a);
        bool forward = a.kind == 'F';
        bool backward = a.kind == 'I' || a.kind == 'B';
        int64_t peer = forward ? a.stage + 1 : a.stage - 1;
        if (!(forward || backward) || peer < 0 || peer >= numStages ||
            rankOf(peer) == int64_t(r))
          continue;
        StringRef send = forward ? "SEND_F" : "SEND_B",
                  recv = forward ? "RECV_F" : "RECV_B";
        out[r].push_back(text(a.stage, send, a.microbatch));
        doneComm[r].insert({a.stage, send, a.microbatch});
        out[rankOf(peer)].push_back(text(peer, recv, a.microbatch));
        doneComm[rankOf(peer)].insert({peer, recv, a.microbatch});
      }
      ++next[r];
      --remaining;
      progress = true;
    }
    if (!progress)
      return op->emitError("cannot add torch's send and receive actions: no "
                           "rank can run its next action (a stage graph "
                           "other than the chain, or an order that "
                           "deadlocks)");
  }
  for (const SmallVector<std::string> &row : out) {
    llvm::interleave(row, os, ",");
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
  TranslateFromMLIRRegistration comms(
      "sched-to-torch-comms-csv",
      "write each worker's compute and communication actions as a "
      "torch.distributed.pipelining compute_comms CSV schedule",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportTorchCommsCSV(op, os);
      },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
