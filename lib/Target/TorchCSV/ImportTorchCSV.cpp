//===- ImportTorchCSV.cpp - read a torch.distributed.pipelining CSV -------===//
//
// Each row is a rank, each non-empty cell an action. Compute actions become
// placed, ordered jobs: `F` a forward, `B` a full backward, `I` the
// input-gradient and `W` the weight-gradient half of a split backward,
// `(xF;yB)OVERLAP_F_B` an overlapped forward and the whole backward it runs
// with.
// Communication and sharding actions (SEND_F, RECV_B, UNSHARD, ...) are
// skipped: pipesched derives its own from the placement.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/TorchCSV.h"

#include "pipesched/Dialect/Sched/SchedGraph.h"
#include "pipesched/Dialect/Sched/SchedOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
enum class ActionKind { Forward, FullBackward, InputBackward, WeightBackward };

struct Action {
  int64_t stage, microbatch, rank;
  ActionKind kind;
  unsigned line, column;
  /// A forward of a `(xF;yB)OVERLAP_F_B` pair: fused with the next action.
  bool overlapped = false;
};

/// Key of a job in the imported graph: a full backward `B` and the input
/// half `I` of a split one are both the `Backward` job.
using JobKey = std::tuple<int64_t, int64_t, unsigned>;
JobKey jobKey(int64_t stage, int64_t microbatch, Direction d) {
  return {stage, microbatch, static_cast<unsigned>(d)};
}

class CSVImporter {
public:
  CSVImporter(llvm::SourceMgr &sourceMgr, MLIRContext *ctx)
      : sourceMgr(sourceMgr), ctx(ctx) {
    const llvm::MemoryBuffer *buffer =
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
    fileName = StringAttr::get(ctx, buffer->getBufferIdentifier());
    text = buffer->getBuffer();
  }

  OwningOpRef<ModuleOp> run();

private:
  Location locAt(unsigned line, unsigned column) {
    return FileLineColLoc::get(fileName, line, column);
  }
  /// A job's position in its rank's order, and the action that runs it.
  struct Slot {
    const Action *action;
    int64_t order;
  };
  LogicalResult parse();
  LogicalResult assignSlots(llvm::DenseMap<JobKey, Slot> &slots);
  LogicalResult checkJobCount(size_t jobs);
  LogicalResult placeJobs(StepOp step, const llvm::DenseMap<JobKey, Slot> &slots);
  LogicalResult parseCell(StringRef cell, int64_t rank, unsigned line,
                          unsigned column);
  LogicalResult parseOverlappedPair(StringRef cell, int64_t rank,
                                    unsigned line, unsigned column);

  llvm::SourceMgr &sourceMgr;
  MLIRContext *ctx;
  StringAttr fileName;
  StringRef text;
  SmallVector<Action> actions; // in row-major (rank, then column) order
  int64_t numRanks = 0, numStages = 0, numMicrobatches = 0;
  bool split = false;
};
} // namespace

/// `(xFi;yBj)OVERLAP_F_B`: DualPipe's overlapped pair, a forward fused with
/// a whole backward (torch `_Action.__repr__` of a composite action).
LogicalResult CSVImporter::parseOverlappedPair(StringRef cell, int64_t rank,
                                               unsigned line, unsigned column) {
  StringRef inner = cell.drop_front();
  size_t close = inner.find(')');
  StringRef kind = close == StringRef::npos ? "" : inner.drop_front(close + 1);
  if (kind != "OVERLAP_F_B")
    return emitError(locAt(line, column))
           << "expected '(<forward>;<backward>)OVERLAP_F_B', got '" << cell
           << "'";
  auto [first, second] = inner.take_front(close).split(';');
  size_t before = actions.size();
  if (failed(parseCell(first.trim(), rank, line, column + 1)) ||
      failed(parseCell(second.trim(), rank, line,
                       column + 2 + unsigned(first.size()))))
    return failure();
  if (actions.size() != before + 2 ||
      actions[before].kind != ActionKind::Forward ||
      actions[before + 1].kind != ActionKind::FullBackward)
    return emitError(locAt(line, column))
           << "an OVERLAP_F_B pair is a forward then a backward, got '"
           << cell << "'";
  actions[before].overlapped = true;
  return success();
}

LogicalResult CSVImporter::parseCell(StringRef cell, int64_t rank,
                                     unsigned line, unsigned column) {
  if (cell.starts_with("("))
    return parseOverlappedPair(cell, rank, line, column);
  StringRef rest = cell;
  int64_t stage = 0, microbatch = 0;
  size_t digits = rest.find_first_not_of("0123456789");
  if (digits == 0 || digits == StringRef::npos ||
      rest.take_front(digits).getAsInteger(10, stage))
    return emitError(locAt(line, column))
           << "expected an action <stage><kind><microbatch> such as '0F3', "
              "got '"
           << cell << "'";
  rest = rest.drop_front(digits);
  size_t kindEnd = rest.find_first_of("0123456789");
  StringRef kind = rest.take_front(kindEnd);
  StringRef number = kindEnd == StringRef::npos ? "" : rest.drop_front(kindEnd);

  std::optional<ActionKind> compute =
      llvm::StringSwitch<std::optional<ActionKind>>(kind)
          .Case("F", ActionKind::Forward)
          .Case("B", ActionKind::FullBackward)
          .Case("I", ActionKind::InputBackward)
          .Case("W", ActionKind::WeightBackward)
          .Default(std::nullopt);
  if (!compute) {
    bool isComm = llvm::StringSwitch<bool>(kind)
                      .Cases({"SEND_F", "RECV_F", "SEND_B", "RECV_B"}, true)
                      .Cases({"UNSHARD", "RESHARD", "REDUCE_GRAD"}, true)
                      .Default(false);
    if (isComm)
      return success(); // pipesched derives communication itself
    return emitError(locAt(line, column))
           << "unknown action kind '" << kind << "' in '" << cell
           << "' (expected F, B, I, W, or a communication action)";
  }
  if (number.empty())
    return emitError(locAt(line, column))
           << "action '" << cell << "' has no microbatch number";
  if (number.getAsInteger(10, microbatch))
    return emitError(locAt(line, column))
           << "action '" << cell << "': '" << number
           << "' is not a microbatch number (a 64-bit integer; actions are "
              "separated by commas)";
  // Indices size tables: bound them before anything is allocated.
  constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max() - 1;
  if (stage > kMaxIndex || microbatch > kMaxIndex)
    return emitError(locAt(line, column))
           << "action '" << cell << "' names "
           << (stage > kMaxIndex ? "stage " : "microbatch ")
           << (stage > kMaxIndex ? stage : microbatch) << ", more than "
           << kMaxIndex;
  actions.push_back({stage, microbatch, rank, *compute, line, column});
  numStages = std::max(numStages, stage + 1);
  numMicrobatches = std::max(numMicrobatches, microbatch + 1);
  split |= *compute == ActionKind::InputBackward ||
           *compute == ActionKind::WeightBackward;
  return success();
}

LogicalResult CSVImporter::parse() {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  // Trailing empty lines are not ranks.
  while (!lines.empty() && lines.back().trim().empty())
    lines.pop_back();
  if (lines.empty())
    return emitError(locAt(1, 1)) << "the CSV schedule has no rank";
  numRanks = lines.size();
  for (auto [row, lineText] : llvm::enumerate(lines)) {
    SmallVector<StringRef> cells;
    lineText.rtrim("\r").split(cells, ',');
    unsigned column = 1;
    for (StringRef cell : cells) {
      StringRef trimmed = cell.trim();
      unsigned cellColumn = column + (cell.size() - cell.ltrim().size());
      if (!trimmed.empty() &&
          failed(parseCell(trimmed, row, row + 1, cellColumn)))
        return failure();
      column += cell.size() + 1;
    }
  }
  if (actions.empty())
    return emitError(locAt(1, 1)) << "the CSV schedule has no compute action";
  return success();
}

/// Each action's jobs at their positions in its rank's order; a full
/// backward in a split schedule takes two (its input half, then its weight
/// half). A job named twice is an error at its second cell.
LogicalResult CSVImporter::assignSlots(llvm::DenseMap<JobKey, Slot> &slots) {
  SmallVector<int64_t> nextOrder(numRanks, 0);
  for (const Action &a : actions) {
    SmallVector<Direction, 2> dirs;
    switch (a.kind) {
    case ActionKind::Forward:
      dirs = {Direction::Forward};
      break;
    case ActionKind::FullBackward:
      dirs = {Direction::Backward};
      if (split)
        dirs.push_back(Direction::BackwardWeight);
      break;
    case ActionKind::InputBackward:
      dirs = {Direction::Backward};
      break;
    case ActionKind::WeightBackward:
      dirs = {Direction::BackwardWeight};
      break;
    }
    for (Direction d : dirs) {
      auto [it, inserted] = slots.try_emplace(
          jobKey(a.stage, a.microbatch, d), Slot{&a, nextOrder[a.rank]++});
      if (!inserted) {
        const Action &first = *it->second.action;
        InFlightDiagnostic diag =
            emitError(locAt(a.line, a.column))
            << "the " << (d == Direction::Forward ? "forward" : "backward")
            << " of stage " << a.stage << ", microbatch " << a.microbatch
            << " appears twice";
        diag.attachNote(locAt(first.line, first.column))
            << "it first appears here";
        return failure();
      }
    }
  }

  return success();
}

/// The step has every job of stages x microbatches (the largest indices
/// named); a schedule that runs far fewer cannot be complete. Refused
/// before the graph is built, so that huge indices allocate nothing; a
/// schedule short of a few jobs gets the precise message of placeJobs.
LogicalResult CSVImporter::checkJobCount(size_t jobs) {
  int64_t expected = 0;
  if (llvm::MulOverflow(numStages, numMicrobatches, expected) ||
      llvm::MulOverflow(expected, int64_t(split ? 3 : 2), expected) ||
      expected > static_cast<int64_t>(jobs) + 1024) {
    const Action *widest = &actions.front();
    for (const Action &a : actions)
      if (a.stage + 1 == numStages || a.microbatch + 1 == numMicrobatches)
        widest = &a;
    emitError(locAt(widest->line, widest->column))
        << "the CSV schedule names " << numStages << " stages and "
        << numMicrobatches << " microbatches but runs only " << jobs
        << " of their jobs (every forward and backward must appear once)";
    return failure();
  }

  return success();
}

/// Every job of the step at its action's rank and position, located at
/// its cell.
LogicalResult CSVImporter::placeJobs(StepOp step,
                                     const llvm::DenseMap<JobKey, Slot> &slots) {
  Location fileLoc = locAt(1, 1);
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    auto it = slots.find(jobKey(job.getStageIndex(), job.getMicrobatchIndex(),
                                job.getDirection()));
    if (it == slots.end()) {
      emitError(fileLoc) << "the CSV schedule never runs " << describeJob(job)
                         << " (stages and microbatches are counted from the "
                            "largest ones it names)";
      return failure();
    }
    const Action &a = *it->second.action;
    job.setComputeWorker(a.rank);
    job.setWeightsWorker(a.rank);
    job.setOrderIndex(it->second.order);
    if (auto forward = dyn_cast<ForwardOp>(op))
      forward.setOverlapped(a.overlapped);
    else if (auto backward = dyn_cast<BackwardOp>(op))
      backward.setWhole(split && a.kind == ActionKind::FullBackward);
    op.setLoc(locAt(a.line, a.column));
  }
  return success();
}

OwningOpRef<ModuleOp> CSVImporter::run() {
  if (failed(parse()))
    return nullptr;
  llvm::DenseMap<JobKey, Slot> slots;
  if (failed(assignSlots(slots)) || failed(checkJobCount(slots.size())))
    return nullptr;
  OpBuilder builder(ctx);
  Location fileLoc = locAt(1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  CostAttr cost = split ? CostAttr::get(ctx, {1}, {1}, {1}, 0, 0, {}, 0, 0, 0, 0, {}, 0, -1)
                        : CostAttr::getDefault(ctx);
  auto step = StepOp::create(builder, fileLoc, numStages, numMicrobatches,
                             numRanks, cost);
  buildJobGraph(step);

  if (failed(placeJobs(step, slots)) || failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> pipesched::importTorchCSV(llvm::SourceMgr &sourceMgr,
                                                MLIRContext *ctx) {
  ctx->getOrLoadDialect<SchedDialect>();
  return CSVImporter(sourceMgr, ctx).run();
}

void pipesched::registerImportTorchCSV() {
  TranslateToMLIRRegistration registration(
      "import-torch-csv",
      "read a torch.distributed.pipelining per-rank CSV schedule",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *ctx) -> OwningOpRef<Operation *> {
        return importTorchCSV(*sourceMgr, ctx).release().getOperation();
      },
      [](DialectRegistry &registry) { registry.insert<SchedDialect>(); });
}
