//===- LoadPlan.cpp - a lowered sched.program read back into its plan -----===//
//
// The mirror of --sched-lower-ranks, as CIRCT's SSP utilities load a
// problem from IR: every job op becomes a planned job, every send and its
// receive one message, every rank's reduction op of a stage one reduction.
// What the plan cannot hold (a message with one end, ends that disagree,
// ranks that disagree on a reduction) is a located error, not a guess.
//
//===----------------------------------------------------------------------===//

#include "PlanWriter.h"

#include "pipesched/Dialect/Sched/SchedScheme.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

namespace {
/// One end of a message as an op states it.
struct MessageEnd {
  sch::Message::Kind kind;
  int64_t stage, microbatch, peer, tag, bytes;
  Value value; ///< what a send sends
};

class PlanLoader {
public:
  explicit PlanLoader(ProgramOp program) : program(program) {}
  FailureOr<LoadedPlan> load();

private:
  LogicalResult loadOp(Operation *op, int32_t rank, int32_t group);
  void loadJob(JobOpInterface job, int32_t rank, int32_t group);
  LogicalResult loadMessageEnd(Operation *op, bool send, const MessageEnd &end,
                               int32_t rank, int32_t group);
  LogicalResult loadReduction(Operation *op, int64_t stage,
                              ArrayRef<int64_t> members,
                              ArrayRef<int64_t> owners, int64_t bytes,
                              int32_t group);
  LogicalResult loadTied(TiedGradOp op, int32_t group);
  uint32_t reductionOf(int64_t stage);
  LogicalResult checkMessages();
  /// The job whose output `value` is, through groups and received values.
  FailureOr<uint32_t> producerOf(Value value, Operation *user);
  LogicalResult loadInputs();
  void add(int32_t rank, sch::PlanOp::Kind kind, uint32_t index,
           int32_t group) {
    result.plan.programs[rank].push_back({kind, index, group});
  }

  ProgramOp program;
  LoadedPlan result;
  llvm::DenseMap<Operation *, uint32_t> jobOf;
  llvm::DenseMap<int64_t, uint32_t> messageOfTag, reductionOfStage, tiedOfTie;
  /// Per message: the op of each end (send, receive) and what is sent.
  SmallVector<std::array<Operation *, 2>> endOps;
  SmallVector<Value> sentValue;
  /// Per reduction and tied reduction: the first op that stated it.
  SmallVector<Operation *> reductionOp, tiedOp;
  /// Positions of the jobs loaded so far, per rank.
  SmallVector<int64_t> positions;
};
} // namespace

static const char *describeKind(sch::Message::Kind kind) {
  switch (kind) {
  case sch::PayloadKind::Activation:
    return "act";
  case sch::PayloadKind::Gradient:
    return "grad";
  case sch::PayloadKind::Scan:
    return "scan";
  default:
    return "weights";
  }
}

/// "act(0, 1) from rank 2 to rank 3, 64 bytes": what must agree.
static std::string describeMessage(const sch::Message &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << describeKind(m.kind) << "(" << m.stage;
  if (m.kind != sch::Message::Weights)
    os << ", " << m.microbatch;
  os << ") from rank " << m.sender << " to rank " << m.receiver << ", "
     << m.bytes << " bytes";
  return text;
}

/// Whether two ends state the same message (what describeMessage names).
static bool sameMessage(const sch::Message &a, const sch::Message &b) {
  return a.kind == b.kind && a.stage == b.stage &&
         a.microbatch == b.microbatch && a.sender == b.sender &&
         a.receiver == b.receiver && a.bytes == b.bytes;
}

void PlanLoader::loadJob(JobOpInterface job, int32_t rank, int32_t group) {
  uint32_t index = result.problem.jobs.size();
  jobOf[job.getOperation()] = index;
  result.problem.jobs.push_back(
      {rank, int32_t(job.getWeightsWorker().value_or(rank)),
       job.getStageIndex(), job.getMicrobatchIndex(),
       toSchedulingDirection(job.getDirection()),
       job.getStartTime().value_or(0), job.getEndTime().value_or(0),
       positions[rank]++, /*outputBytes=*/-1});
  result.jobs.push_back(job);
  add(rank, sch::PlanOp::Job, index, group);
}

LogicalResult PlanLoader::loadMessageEnd(Operation *op, bool send,
                                         const MessageEnd &end, int32_t rank,
                                         int32_t group) {
  auto [it, inserted] = messageOfTag.try_emplace(
      end.tag, uint32_t(result.plan.messages.size()));
  int32_t peer = int32_t(end.peer);
  sch::Message stated{end.kind,  send ? rank : peer, send ? peer : rank,
                      end.stage, end.microbatch,     0,
                      end.tag,   end.bytes};
  if (inserted) {
    result.plan.messages.push_back(stated);
    endOps.push_back({nullptr, nullptr});
    sentValue.push_back(Value());
  }
  uint32_t m = it->second;
  std::array<Operation *, 2> &ops = endOps[m];
  if (Operation *twin = ops[send ? 0 : 1]) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "reuses tag " << end.tag << ": a tag names "
                              << "one message, sent once and received once";
    diag.attachNote(twin->getLoc()) << "first used here";
    return diag;
  }
  const sch::Message &first = result.plan.messages[m];
  if (!inserted && !sameMessage(first, stated)) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "states " << describeMessage(stated)
                              << " for tag " << end.tag
                              << ", its other end " << describeMessage(first);
    diag.attachNote(ops[send ? 1 : 0]->getLoc()) << "the other end";
    return diag;
  }
  ops[send ? 0 : 1] = op;
  if (send)
    sentValue[m] = end.value;
  add(rank, send ? sch::PlanOp::Send : sch::PlanOp::Recv, m, group);
  return success();
}

uint32_t PlanLoader::reductionOf(int64_t stage) {
  auto [it, inserted] =
      reductionOfStage.try_emplace(stage, result.plan.reductions.size());
  if (inserted) {
    result.plan.reductions.push_back({stage, {}, {}, 0});
    reductionOp.push_back(nullptr);
  }
  return it->second;
}

static std::vector<int32_t> narrow(ArrayRef<int64_t> ranks) {
  return std::vector<int32_t>(ranks.begin(), ranks.end());
}

LogicalResult PlanLoader::loadReduction(Operation *op, int64_t stage,
                                        ArrayRef<int64_t> members,
                                        ArrayRef<int64_t> owners,
                                        int64_t bytes, int32_t group) {
  uint32_t r = reductionOf(stage);
  sch::Reduction &reduction = result.plan.reductions[r];
  int32_t rank = int32_t(op->getParentOfType<RankOp>().getRank());
  if (Operation *first = reductionOp[r]) {
    if (reduction.members != narrow(members) ||
        reduction.owners != narrow(owners) || reduction.bytes != bytes) {
      InFlightDiagnostic diag =
          op->emitOpError() << "disagrees with another rank's reduction of "
                            << "stage " << stage
                            << " (members, root or bytes)";
      diag.attachNote(first->getLoc()) << "the other rank's";
      return diag;
    }
  } else {
    reduction.members = narrow(members);
    reduction.owners = narrow(owners);
    reduction.bytes = bytes;
    reductionOp[r] = op;
  }
  add(rank, sch::PlanOp::Collective, r, group);
  return success();
}

LogicalResult PlanLoader::loadTied(TiedGradOp op, int32_t group) {
  std::vector<int32_t> members = narrow(op.getMembers());
  int32_t rank = int32_t(op->getParentOfType<RankOp>().getRank());
  // One member: that rank's local sum, a reduction of its own (as the
  // planner makes one per owner of the whole group, DDP's case).
  if (members.size() == 1) {
    add(rank, sch::PlanOp::TiedGrad, uint32_t(result.plan.tied.size()), group);
    result.plan.tied.push_back(
        {int64_t(op.getTie()), members, int64_t(op.getBytes())});
    tiedOp.push_back(op);
    return success();
  }
  auto [it, inserted] =
      tiedOfTie.try_emplace(op.getTie(), result.plan.tied.size());
  if (inserted) {
    result.plan.tied.push_back({int64_t(op.getTie()), members,
                                int64_t(op.getBytes())});
    tiedOp.push_back(op);
  }
  const sch::TiedReduction &tied = result.plan.tied[it->second];
  if (tied.members != members || tied.bytes != int64_t(op.getBytes())) {
    InFlightDiagnostic diag =
        op.emitOpError() << "disagrees with another rank's reduction of tie "
                         << op.getTie() << " (members or bytes)";
    diag.attachNote(tiedOp[it->second]->getLoc()) << "the other rank's";
    return diag;
  }
  add(rank, sch::PlanOp::TiedGrad, it->second, group);
  return success();
}

LogicalResult PlanLoader::loadOp(Operation *op, int32_t rank, int32_t group) {
  if (auto job = dyn_cast<JobOpInterface>(op))
    return loadJob(job, rank, group), success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](SendOp o) {
        return loadMessageEnd(o, true,
                              {toPayloadKind(o.getKind()), int64_t(o.getStage()),
                               int64_t(o.getMicrobatch()), int64_t(o.getPeer()),
                               int64_t(o.getTag()), int64_t(o.getBytes()),
                               o.getValue()},
                              rank, group);
      })
      .Case([&](RecvOp o) {
        return loadMessageEnd(o, false,
                              {toPayloadKind(o.getKind()), int64_t(o.getStage()),
                               int64_t(o.getMicrobatch()), int64_t(o.getPeer()),
                               int64_t(o.getTag()), int64_t(o.getBytes()), {}},
                              rank, group);
      })
      .Case<SendWeightsOp, FetchWeightsOp>([&](auto o) {
        return loadMessageEnd(o, isa<SendWeightsOp>(o.getOperation()),
                              {sch::Message::Weights, int64_t(o.getStage()), -1,
                               int64_t(o.getPeer()), int64_t(o.getTag()),
                               int64_t(o.getBytes()), {}},
                              rank, group);
      })
      .Case([&](ReleaseWeightsOp o) {
        add(rank, sch::PlanOp::ReleaseWeights, uint32_t(o.getStage()), group);
        return success();
      })
      .Case([&](AllReduceGradOp o) {
        return loadReduction(o, o.getStage(), o.getMembers(), o.getMembers(),
                             o.getBytes(), group);
      })
      .Case([&](ReduceGradOp o) {
        int64_t root = o.getRoot();
        return loadReduction(o, o.getStage(), o.getMembers(),
                             ArrayRef<int64_t>(&root, 1), o.getBytes(), group);
      })
      .Case([&](OptimizerStepOp o) {
        add(rank, sch::PlanOp::OptimizerStep, reductionOf(o.getStage()),
            group);
        return success();
      })
      .Case([&](TiedGradOp o) { return loadTied(o, group); })
      .Default([](Operation *other) {
        return other->emitOpError("has no place in a rank program");
      });
}

LogicalResult PlanLoader::checkMessages() {
  for (auto [m, ops] : llvm::enumerate(endOps)) {
    if (ops[0] && ops[1])
      continue;
    Operation *lone = ops[0] ? ops[0] : ops[1];
    return lone->emitOpError()
           << "has no " << (ops[0] ? "receiving" : "sending")
           << " end: no op of the program "
           << (ops[0] ? "receives" : "sends") << " tag "
           << result.plan.messages[m].tag;
  }
  return success();
}

FailureOr<uint32_t> PlanLoader::producerOf(Value value, Operation *user) {
  // A relay (a received value sent on) is followed to its first sender;
  // more hops than messages means the relays form a cycle.
  for (size_t hops = 0; hops <= 2 * endOps.size() + 1; ++hops) {
    Operation *def = value.getDefiningOp();
    if (auto group = dyn_cast_or_null<GroupOp>(def)) {
      auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
      value = yield.getValues()[cast<OpResult>(value).getResultNumber()];
    } else if (auto recv = dyn_cast_or_null<RecvOp>(def)) {
      value = sentValue[messageOfTag.lookup(recv.getTag())];
    } else if (auto it = jobOf.find(def); def && it != jobOf.end()) {
      return it->second;
    } else {
      break;
    }
  }
  return user->emitOpError("uses a value that no job computes");
}

LogicalResult PlanLoader::loadInputs() {
  sch::CommProblem &p = result.problem;
  for (auto [m, message] : llvm::enumerate(result.plan.messages)) {
    if (message.kind == sch::Message::Weights)
      continue;
    FailureOr<uint32_t> producer = producerOf(sentValue[m], endOps[m][0]);
    if (failed(producer))
      return failure();
    message.producer = *producer;
    const sch::PlannedJob &job = p.jobs[*producer];
    bool forward = job.direction == sch::Direction::Forward;
    if (message.kind != sch::Message::Scan &&
        (job.stage != message.stage || job.microbatch != message.microbatch ||
         forward != (message.kind == sch::Message::Activation)))
      return endOps[m][0]->emitOpError()
             << "sends the output of " << describeJob(result.jobs[*producer])
             << " as " << describeKind(message.kind) << "(" << message.stage
             << ", " << message.microbatch << ")";
  }
  p.inputBegin.assign(1, 0);
  for (JobOpInterface job : result.jobs) {
    for (Value operand : job->getOperands()) {
      FailureOr<uint32_t> producer = producerOf(operand, job);
      if (failed(producer))
        return failure();
      p.inputs.push_back(*producer);
    }
    p.inputBegin.push_back(uint32_t(p.inputs.size()));
  }
  return success();
}

FailureOr<LoadedPlan> PlanLoader::load() {
  int32_t workers = int32_t(program.getWorkers());
  result.problem.numWorkers = workers;
  result.problem.numStages = program.getStages();
  result.plan.programs.resize(workers);
  positions.assign(workers, 0);
  for (Operation &op : program.getBody().front()) {
    auto rank = cast<RankOp>(op);
    int32_t r = int32_t(rank.getRank()), groups = 0;
    result.plan.owns.push_back(rank.getOwns().vec());
    for (Operation &inner : rank.getBody().front()) {
      auto group = dyn_cast<GroupOp>(inner);
      if (!group && failed(loadOp(&inner, r, /*group=*/-1)))
        return failure();
      if (group) {
        for (Operation &member : group.getBody().front().without_terminator())
          if (failed(loadOp(&member, r, groups)))
            return failure();
        ++groups;
      }
    }
  }
  if (failed(checkMessages()) || failed(loadInputs()))
    return failure();
  return std::move(result);
}

FailureOr<LoadedPlan> pipesched::loadPlan(ProgramOp program) {
  return PlanLoader(program).load();
}
