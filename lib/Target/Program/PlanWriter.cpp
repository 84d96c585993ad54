//===- PlanWriter.cpp - the one writer of program files -------------------===//
//
// Walks each worker's plan into the encoder (ProgramEncoder.h), naming
// every tensor an op reads or writes by the schema's ids: a job reads the
// outputs of its input jobs, a message carries its producer's output.
//
//===----------------------------------------------------------------------===//

#include "PlanWriter.h"

#include "pipesched/Program/Schema.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;
namespace sch = pipesched::scheduling;
namespace schema = pipesched::program;

namespace {
class PlanWriter {
public:
  explicit PlanWriter(const PlanToWrite &in)
      : in(in), problem(in.problem), plan(in.plan), naming(in.naming) {
    numberScanTensors();
  }
  void write(ProgramEncoder &out);

private:
  void writeOp(ProgramEncoder &out, const sch::PlanOp &op);
  void writeJob(ProgramEncoder &out, uint32_t j);
  void writeMessageEnd(ProgramEncoder &out, const sch::PlanOp &op);
  void writeProgram(ProgramEncoder &out, ArrayRef<sch::PlanOp> program);
  /// The tensor job `j` makes.
  int64_t tensorOf(uint32_t j) const {
    const sch::PlannedJob &job = problem.jobs[j];
    if (job.direction == sch::Direction::Scan)
      return scanTensor.lookup(j);
    return naming.output(job.direction == sch::Direction::Forward, job.stage,
                         job.microbatch);
  }
  /// Scan jobs' outputs in program order, after the act and grad ids.
  void numberScanTensors();
  ArrayRef<int64_t> widen(ArrayRef<int32_t> ranks) {
    wide.assign(ranks.begin(), ranks.end());
    return wide;
  }

  const PlanToWrite &in;
  const sch::CommProblem &problem;
  const sch::CommPlan &plan;
  const TensorNaming &naming;
  llvm::DenseMap<uint32_t, int64_t> scanTensor;
  SmallVector<int64_t, 8> reads, wide;
};
} // namespace

void PlanWriter::numberScanTensors() {
  int64_t next =
      schema::tensorCount(in.header.stages, in.header.microbatches);
  for (const std::vector<sch::PlanOp> &program : plan.programs)
    for (const sch::PlanOp &op : program)
      if (op.kind == sch::PlanOp::Job &&
          problem.jobs[op.index].direction == sch::Direction::Scan)
        scanTensor[op.index] = next++;
}

void PlanWriter::writeJob(ProgramEncoder &out, uint32_t j) {
  const sch::PlannedJob &job = problem.jobs[j];
  JobOpInterface jobOp = in.jobs[j];
  // A weight half without a gradient operand re-reads its backward's
  // inputs; every other job reads its inputs' outputs.
  reads.clear();
  if (TensorNaming::rereadsBackward(jobOp.getOperation()))
    naming.backwardReads(job.stage, job.microbatch, reads);
  else
    for (uint32_t k = problem.inputBegin[j]; k < problem.inputBegin[j + 1];
         ++k)
      reads.push_back(tensorOf(problem.inputs[k]));
  naming.writeJob(out, jobKind(jobOp.getOperation()), jobOp, job.stage,
                  job.microbatch, reads, scanTensor.lookup(j),
                  jobOp.getStartTime(), jobOp.getEndTime());
}

void PlanWriter::writeMessageEnd(ProgramEncoder &out, const sch::PlanOp &op) {
  const sch::Message &m = plan.messages[op.index];
  bool send = op.kind == sch::PlanOp::Send;
  int64_t peer = send ? m.receiver : m.sender;
  if (m.kind == sch::Message::Weights)
    out.weights(send, m.stage, peer, m.tag, m.bytes);
  else if (send)
    out.send(tensorOf(m.producer), peer, m.tag, m.bytes);
  else
    out.recv(tensorOf(m.producer), peer, m.tag, m.bytes);
}

void PlanWriter::writeOp(ProgramEncoder &out, const sch::PlanOp &op) {
  switch (op.kind) {
  case sch::PlanOp::Job:
    return writeJob(out, op.index);
  case sch::PlanOp::Send:
  case sch::PlanOp::Recv:
    return writeMessageEnd(out, op);
  case sch::PlanOp::ReleaseWeights:
    return out.releaseWeights(op.index);
  case sch::PlanOp::Collective: {
    const sch::Reduction &r = plan.reductions[op.index];
    if (r.isAllReduce())
      return out.allReduceGrad(r.stage, widen(r.members), r.bytes);
    return out.reduceGrad(r.stage, r.owners.front(), widen(r.members),
                          r.bytes);
  }
  case sch::PlanOp::OptimizerStep:
    return out.optimizerStep(plan.reductions[op.index].stage);
  case sch::PlanOp::TiedGrad: {
    const sch::TiedReduction &t = plan.tied[op.index];
    return out.tiedGrad(t.tie, widen(t.members), t.bytes);
  }
  }
}

void PlanWriter::writeProgram(ProgramEncoder &out,
                              ArrayRef<sch::PlanOp> program) {
  // Consecutive ops with one group id >= 0 form a group.
  for (size_t i = 0; i < program.size(); ++i) {
    int32_t group = program[i].group;
    if (group >= 0 && (i == 0 || program[i - 1].group != group))
      out.beginGroup();
    writeOp(out, program[i]);
    if (group >= 0 &&
        (i + 1 == program.size() || program[i + 1].group != group))
      out.endGroup();
  }
}

void PlanWriter::write(ProgramEncoder &out) {
  ProgramHeader header = in.header;
  header.scanTensors = int64_t(scanTensor.size());
  out.begin(header);
  for (size_t w = 0; w < plan.programs.size(); ++w) {
    out.beginRank(int64_t(w), plan.owns[w]);
    writeProgram(out, plan.programs[w]);
    out.endRank();
  }
}

LogicalResult pipesched::writePlan(const PlanToWrite &toWrite,
                                   ProgramEncoder &out, Operation *where) {
  PlanWriter(toWrite).write(out);
  if (llvm::Error error = out.finish())
    return where->emitError() << llvm::toString(std::move(error));
  return success();
}
