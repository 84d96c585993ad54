//===- BuildDiagram.cpp - a simulated step as a diagram -------------------===//
//
// Jobs come from the same conversion the lowering plans from
// (buildCommProblem), marks from the communication plan itself: a diagram
// shows the transfers the rank programs will make.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Diagram.h"

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Target/TorchCSV.h"
#include "pipesched/Transforms/CommProblem.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::diagram;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;

size_t Diagram::boxCount() const {
  return llvm::count_if(jobs, [](const Job &j) { return !j.partOfPair; });
}

/// torch's action letter of a job (TorchCSV.h), with G, J, C for BPPSA.
static char kindOf(JobOpInterface job, bool split) {
  Operation *op = job.getOperation();
  if (isa<LossGradOp>(op))
    return 'G';
  if (isa<JacobianOp>(op))
    return 'J';
  if (isa<CombineOp>(op))
    return 'C';
  return torchActionLetter(job, split);
}

/// The boxes: every job in its worker's order (plan.programs lists each
/// worker's jobs in order).
static void addJobs(const StepCommProblem &input, const sch::CommPlan &plan,
                    bool split, Diagram &d) {
  const sch::CommProblem &problem = input.problem;
  // `pair` below points into d.jobs: no reallocation while it lives.
  d.jobs.reserve(problem.jobs.size());
  for (const std::vector<sch::PlanOp> &program : plan.programs) {
    Job *pair = nullptr; // the overlapped forward whose tail comes next
    for (const sch::PlanOp &op : program) {
      if (op.kind != sch::PlanOp::Job)
        continue;
      const sch::PlannedJob &p = problem.jobs[op.index];
      JobOpInterface ir = input.jobs[op.index];
      Job job;
      job.worker = p.worker;
      job.stage = p.stage;
      job.microbatch = p.microbatch;
      job.kind = kindOf(ir, split);
      job.start = p.start;
      job.end = p.end;
      job.label = std::to_string(p.stage) + job.kind + std::to_string(p.microbatch);
      d.makespan = std::max(d.makespan, p.end);
      // An overlapped pair: the forward's box carries the backward (and its
      // weight half), which the simulator ran inside it at zero length.
      if (pair && p.start == p.end && p.start == pair->end &&
          p.direction != sch::Direction::Forward) {
        job.partOfPair = true;
        if (job.kind != 'W')
          pair->label += ";" + job.label;
      } else {
        pair = nullptr;
      }
      d.jobs.push_back(std::move(job));
      auto forward = dyn_cast<ForwardOp>(ir.getOperation());
      if (forward && forward.getOverlapped())
        pair = &d.jobs.back();
    }
  }

}

/// The arrows: every message, sent when its producer ends (weights: at the
/// sender's program point) and arriving no later than its first use.
static void addMarks(const sch::CommProblem &problem, const sch::CommPlan &plan,
                     int64_t transfer, Diagram &d) {
  // When each tensor is first needed on a worker: a transfer arrives no
  // later than that (the simulator's transfer time, capped by the consumer).
  llvm::DenseMap<std::pair<uint32_t, int32_t>, int64_t> firstUse;
  for (auto [i, p] : llvm::enumerate(problem.jobs))
    for (uint32_t k = problem.inputBegin[i]; k < problem.inputBegin[i + 1]; ++k) {
      auto [it, inserted] = firstUse.try_emplace(
          {problem.inputs[k], p.worker}, p.start);
      if (!inserted)
        it->second = std::min(it->second, p.start);
    }
  // Weights move at program points: the start of the worker's next job.
  std::vector<int64_t> sendAt(plan.messages.size(), 0),
      recvAt(plan.messages.size(), 0);
  for (const std::vector<sch::PlanOp> &program : plan.programs) {
    int64_t next = d.makespan;
    for (const sch::PlanOp &op : llvm::reverse(program)) {
      if (op.kind == sch::PlanOp::Job)
        next = problem.jobs[op.index].start;
      else if (op.kind == sch::PlanOp::Send)
        sendAt[op.index] = next;
      else if (op.kind == sch::PlanOp::Recv)
        recvAt[op.index] = next;
    }
  }
  for (auto [i, m] : llvm::enumerate(plan.messages)) {
    Mark mark;
    mark.kind = m.kind;
    mark.from = m.sender;
    mark.to = m.receiver;
    mark.stage = m.stage;
    mark.microbatch = m.microbatch;
    mark.bytes = m.bytes;
    if (m.kind == sch::Message::Weights) {
      mark.sent = sendAt[i];
      mark.arrived = std::max(mark.sent, recvAt[i]);
    } else {
      mark.sent = problem.jobs[m.producer].end;
      int64_t needed = firstUse.lookup({m.producer, m.receiver});
      mark.arrived = std::max(mark.sent, std::min(mark.sent + transfer, needed));
    }
    d.marks.push_back(mark);
  }
  llvm::stable_sort(d.marks, [](const Mark &a, const Mark &b) {
    return a.sent < b.sent;
  });
}

FailureOr<Diagram> diagram::buildDiagram(StepOp step) {
  if (step.isSpec())
    return step.emitOpError("has no jobs to draw: run --sched-expand, "
                            "--sched-place and --sched-simulate first");
  FailureOr<StepCommProblem> input = buildCommProblem(step, /*prefetchDepth=*/1);
  if (failed(input))
    return failure();
  const sch::CommProblem &problem = input->problem;
  if (std::string error = problem.check(); !error.empty())
    return step.emitOpError() << "cannot plan communication: " << error;
  sch::CommPlan plan = sch::planCommunication(problem);

  CostAttr cost = step.getCostOrDefault();
  Diagram d;
  d.stages = step.getStages();
  d.microbatches = step.getMicrobatches();
  d.workers = static_cast<int32_t>(step.getWorkers());
  d.tickNs = cost.getTickNs();
  {
    llvm::raw_string_ostream title(d.title);
    title << "stages = " << d.stages << ", microbatches = " << d.microbatches
          << ", workers = " << d.workers;
    if (Attribute strategy = step.getStrategyAttr())
      title << ", " << strategy;
  }

  addJobs(*input, plan, cost.isSplitBackward(), d);
  addMarks(problem, plan, cost.getTransfer(), d);
  return d;
}

FailureOr<Diagram> diagram::buildDiagram(Operation *op) {
  if (auto step = dyn_cast<StepOp>(op))
    return buildDiagram(step);
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (!programs.empty())
    return programs.front().emitOpError(
        "holds rank programs: draw the step before --sched-lower-ranks");
  FailureOr<StepOp> step = getSingleStep(op);
  if (failed(step))
    return failure();
  return buildDiagram(*step);
}
