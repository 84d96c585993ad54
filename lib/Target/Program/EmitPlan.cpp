//===- EmitPlan.cpp - program files straight from a plan ------------------===//
//
// The lowering without rank IR: a simulated step is planned (planStep, as
// --sched-lower-ranks plans it) and each worker's plan is written through
// the encoder directly. --sched-lower-ranks would build one op per job,
// message end, group and collective (4.2 million program ops at 10^6 jobs
// of 1F1B) only for the writer to walk them; this writes the same bytes
// (test/Target/program-layouts.test, fuzz-mlir-pipeline) in half the time
// and 60% of the memory (docs/bench.md).
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Program.h"

#include "ProgramNaming.h"

#include "pipesched/Transforms/CommProblem.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;
namespace schema = pipesched::program;

namespace {
class PlanWriter {
public:
  PlanWriter(StepOp step, const PlannedStep &planned)
      : step(step), problem(planned.input.problem), jobs(planned.input.jobs),
        plan(planned.plan), makespan(planned.makespan),
        replayed(planned.replayed), naming(step) {
    numberScanTensors();
  }
  void write(ProgramEncoder &out);

private:
  void writeOp(ProgramEncoder &out, const sch::PlanOp &op);
  /// The tensor job `j` makes.
  int64_t tensorOf(uint32_t j) const {
    const sch::PlannedJob &job = problem.jobs[j];
    if (job.direction == sch::Direction::Scan)
      return scanTensor.lookup(j);
    return naming.output(job.direction == sch::Direction::Forward, job.stage,
                         job.microbatch);
  }
  /// Scan jobs' outputs in program order, after the act and grad ids (the
  /// order the rank IR has them in).
  void numberScanTensors();
  ArrayRef<int64_t> widen(ArrayRef<int32_t> ranks) {
    wide.assign(ranks.begin(), ranks.end());
    return wide;
  }

  StepOp step;
  const sch::CommProblem &problem;
  ArrayRef<JobOpInterface> jobs;
  const sch::CommPlan &plan;
  int64_t makespan, replayed;
  TensorNaming naming;
  llvm::DenseMap<uint32_t, int64_t> scanTensor;
  SmallVector<int64_t, 8> reads, wide;
};
} // namespace

void PlanWriter::numberScanTensors() {
  int64_t next = schema::tensorCount(problem.numStages, step.getMicrobatches());
  for (const std::vector<sch::PlanOp> &program : plan.programs)
    for (const sch::PlanOp &op : program)
      if (op.kind == sch::PlanOp::Job &&
          problem.jobs[op.index].direction == sch::Direction::Scan)
        scanTensor[op.index] = next++;
}

void PlanWriter::writeOp(ProgramEncoder &out, const sch::PlanOp &op) {
  switch (op.kind) {
  case sch::PlanOp::Job: {
    uint32_t j = op.index;
    const sch::PlannedJob &job = problem.jobs[j];
    JobOpInterface jobOp = jobs[j];
    schema::OpKind kind = jobKind(jobOp.getOperation());
    // As ExportProgram reads the rank IR: a weight half without a gradient
    // operand re-reads its backward's inputs; every other job reads its
    // problem inputs (its operands).
    reads.clear();
    if (TensorNaming::rereadsBackward(jobOp.getOperation()))
      naming.backwardReads(job.stage, job.microbatch, reads);
    else
      for (uint32_t k = problem.inputBegin[j]; k < problem.inputBegin[j + 1];
           ++k)
        reads.push_back(tensorOf(problem.inputs[k]));
    naming.writeJob(out, kind, jobOp, job.stage, job.microbatch, reads,
                    scanTensor.lookup(j), job.start, job.end);
    return;
  }
  case sch::PlanOp::Send:
  case sch::PlanOp::Recv: {
    const sch::Message &m = plan.messages[op.index];
    bool send = op.kind == sch::PlanOp::Send;
    int64_t peer = send ? m.receiver : m.sender;
    if (m.kind == sch::Message::Weights)
      out.weights(send, m.stage, peer, m.tag, m.bytes);
    else if (send)
      out.send(tensorOf(m.producer), peer, m.tag, m.bytes);
    else
      out.recv(tensorOf(m.producer), peer, m.tag, m.bytes);
    return;
  }
  case sch::PlanOp::ReleaseWeights:
    out.releaseWeights(op.index);
    return;
  case sch::PlanOp::Collective: {
    const sch::Reduction &r = plan.reductions[op.index];
    if (r.isAllReduce())
      out.allReduceGrad(r.stage, widen(r.members), r.bytes);
    else
      out.reduceGrad(r.stage, r.owners.front(), widen(r.members), r.bytes);
    return;
  }
  case sch::PlanOp::OptimizerStep:
    out.optimizerStep(plan.reductions[op.index].stage);
    return;
  case sch::PlanOp::TiedGrad: {
    const sch::TiedReduction &t = plan.tied[op.index];
    out.tiedGrad(t.tie, widen(t.members), t.bytes);
    return;
  }
  }
}

void PlanWriter::write(ProgramEncoder &out) {
  out.begin(makeProgramHeader(
      step.getStages(), step.getMicrobatches(), step.getWorkers(),
      step.getStageGraphAttr(), step.getTiedAttr(), step.getCostOrDefault(),
      step.getLayers(), makespan, replayed, int64_t(scanTensor.size())));
  for (size_t w = 0; w < plan.programs.size(); ++w) {
    out.beginRank(int64_t(w), plan.owns[w]);
    const std::vector<sch::PlanOp> &program = plan.programs[w];
    for (size_t i = 0; i < program.size(); ++i) {
      int32_t group = program[i].group;
      if (group >= 0 && (i == 0 || program[i - 1].group != group))
        out.beginGroup();
      writeOp(out, program[i]);
      if (group >= 0 &&
          (i + 1 == program.size() || program[i + 1].group != group))
        out.endGroup();
    }
    out.endRank();
  }
}

LogicalResult pipesched::emitPlannedStep(StepOp step,
                                         const PlannedStep &planned,
                                         ProgramEncoder &out) {
  PlanWriter(step, planned).write(out);
  if (llvm::Error error = out.finish()) {
    step.emitError() << llvm::toString(std::move(error));
    return failure();
  }
  return success();
}

LogicalResult pipesched::compileProgram(Operation *op, int64_t prefetchDepth,
                                        bool verify, ProgramEncoder &out,
                                        TimingScope *timing) {
  SmallVector<StepOp> steps;
  SmallVector<ProgramOp> programs;
  collectStepsAndPrograms(op, steps, programs);
  if (steps.empty())
    return exportProgram(op, out, verify);
  if (steps.size() + programs.size() != 1)
    return op->emitError() << "expected exactly one step to compile, got "
                           << steps.size() << " steps and " << programs.size()
                           << " programs";
  TimingScope none;
  TimingScope &root = timing ? *timing : none;
  FailureOr<PlannedStep> planned =
      planStep(steps.front(), prefetchDepth, verify, &root);
  if (failed(planned))
    return failure();
  TimingScope emitting = root.nest("Emit program");
  return emitPlannedStep(steps.front(), *planned, out);
}
