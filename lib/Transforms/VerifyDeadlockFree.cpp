//===- VerifyDeadlockFree.cpp - prove that rank programs complete ---------===//
//
// A thin adapter: rank programs -> scheduling::RankProgram -> abstract
// execution (lib/Scheduling/DeadlockCheck) -> located diagnostics.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Dialect/Sched/SchedScheme.h"
#include "pipesched/Scheduling/DeadlockCheck.h"
#include "pipesched/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDVERIFYDEADLOCKFREE
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

using sch::PayloadKind;

namespace {
struct SchedVerifyDeadlockFree
    : pipesched::impl::SchedVerifyDeadlockFreeBase<SchedVerifyDeadlockFree> {
  void runOnOperation() override;
};
} // namespace

/// A short description of a program op for diagnostics.
static std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "'";
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SendOp o) {
        os << " " << stringifyTensorKind(o.getKind()) << "(" << o.getStage()
           << ", " << o.getMicrobatch() << ") to rank " << o.getPeer();
      })
      .Case([&](RecvOp o) {
        os << " " << stringifyTensorKind(o.getKind()) << "(" << o.getStage()
           << ", " << o.getMicrobatch() << ") from rank " << o.getPeer();
      })
      .Case([&](SendWeightsOp o) {
        os << "(" << o.getStage() << ") to rank " << o.getPeer();
      })
      .Case([&](FetchWeightsOp o) {
        os << "(" << o.getStage() << ") from rank " << o.getPeer();
      })
      .Case<AllReduceGradOp, ReduceGradOp>(
          [&](auto o) { os << "(" << o.getStage() << ")"; })
      .Case([&](TiedGradOp o) { os << "(" << o.getTie() << ")"; });
  return text;
}

/// Converts one communication op; false if `op` is not point-to-point.
static bool toCommOp(Operation *op, uint32_t id, sch::CommOp &comm) {
  comm.id = id;
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](SendOp o) {
        comm = {true, int32_t(o.getPeer()),
                {toPayloadKind(o.getKind()),
                 int64_t(o.getStage()), int64_t(o.getMicrobatch()),
                 int64_t(o.getTag()), int64_t(o.getBytes()), -1},
                id};
        return true;
      })
      .Case([&](RecvOp o) {
        comm = {false, int32_t(o.getPeer()),
                {toPayloadKind(o.getKind()),
                 int64_t(o.getStage()), int64_t(o.getMicrobatch()),
                 int64_t(o.getTag()), int64_t(o.getBytes()), -1},
                id};
        return true;
      })
      .Case([&](SendWeightsOp o) {
        comm = {true, int32_t(o.getPeer()),
                {PayloadKind::Weights, int64_t(o.getStage()), -1, int64_t(o.getTag()),
                 int64_t(o.getBytes()), -1},
                id};
        return true;
      })
      .Case([&](FetchWeightsOp o) {
        comm = {false, int32_t(o.getPeer()),
                {PayloadKind::Weights, int64_t(o.getStage()), -1, int64_t(o.getTag()),
                 int64_t(o.getBytes()), -1},
                id};
        return true;
      })
      .Default([](Operation *) { return false; });
}

void SchedVerifyDeadlockFree::runOnOperation() {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(getOperation(), steps, programs);
  if (programs.empty() && !steps.empty()) {
    steps.front().emitOpError("has no rank programs to verify: run "
                              "--sched-lower-ranks first");
    return signalPassFailure();
  }
  for (ProgramOp program : programs)
    if (failed(verifyDeadlockFree(program)))
      return signalPassFailure();
}

LogicalResult pipesched::verifyDeadlockFree(ProgramOp step) {
  std::vector<Operation *> ops; // id -> op
  std::vector<sch::RankProgram> programs;
  for (Operation &rankOp : step.getBody().front()) {
    sch::RankProgram &program = programs.emplace_back();
    for (Operation &op : cast<RankOp>(rankOp).getBody().front()) {
      sch::ProgramStep &ps = program.emplace_back();
      ps.id = ops.size();
      ops.push_back(&op);
      sch::CommOp comm;
      if (auto group = dyn_cast<GroupOp>(op)) {
        ps.kind = sch::ProgramStep::Group;
        for (Operation &inner : group.getBody().front().without_terminator()) {
          uint32_t id = ops.size();
          ops.push_back(&inner);
          if (toCommOp(&inner, id, comm))
            ps.ops.push_back(comm);
        }
      } else if (toCommOp(&op, ps.id, comm)) {
        ps.kind = sch::ProgramStep::Group;
        ps.ops.push_back(comm);
      } else if (auto all = dyn_cast<AllReduceGradOp>(op)) {
        ps.kind = sch::ProgramStep::Collective;
        ps.members.assign(all.getMembers().begin(), all.getMembers().end());
        ps.payload = {PayloadKind::AllReduce, int64_t(all.getStage()), -1, 0,
                      int64_t(all.getBytes()), -1};
      } else if (auto reduce = dyn_cast<ReduceGradOp>(op)) {
        ps.kind = sch::ProgramStep::Collective;
        ps.members.assign(reduce.getMembers().begin(),
                          reduce.getMembers().end());
        ps.payload = {PayloadKind::Reduce, int64_t(reduce.getStage()), -1, 0,
                      int64_t(reduce.getBytes()), int64_t(reduce.getRoot())};
      } else if (auto tied = dyn_cast<TiedGradOp>(op);
                 tied && tied.getMembers().size() > 1) {
        // One member: a local sum, no communication.
        ps.kind = sch::ProgramStep::Collective;
        ps.members.assign(tied.getMembers().begin(), tied.getMembers().end());
        ps.payload = {PayloadKind::Tied, int64_t(tied.getTie()), -1, 0,
                      int64_t(tied.getBytes()), -1};
      }
    }
  }

  sch::DeadlockResult result = sch::checkDeadlockFree(programs);
  if (result.status == sch::DeadlockResult::Ok)
    return success();
  if (result.status == sch::DeadlockResult::Mismatch) {
    Operation *first = ops[result.first], *second = ops[result.second];
    InFlightDiagnostic diag = first->emitOpError()
                              << "meets " << describe(second)
                              << ", which differs in " << result.field;
    diag.attachNote(second->getLoc()) << "the other side is here";
    return failure();
  }
  InFlightDiagnostic diag = step.emitOpError()
                            << "rank programs deadlock: ";
  for (auto [i, wait] : llvm::enumerate(result.waits)) {
    if (i)
      diag << "; ";
    diag << "rank " << wait.rank << " waits in " << describe(ops[wait.opId])
         << " for rank " << wait.waitsFor;
    if (wait.peerFinished)
      diag << ", which has finished";
  }
  if (result.cycle)
    diag << " (a cycle)";
  for (const sch::Wait &wait : result.waits)
    diag.attachNote(ops[wait.opId]->getLoc())
        << "rank " << wait.rank << " is stuck here";
  return failure();
}
