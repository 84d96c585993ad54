#include "exec/executor.h"

#include "comm/abort_job.h"
#include "program/roles.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace pipesched::runtime {

Executor::Executor(const Program &program, int rank, const Model &model,
                   Backend &backend, const ExecutorConfig &config)
    : program_(program), mine_(program.ranks[rank]), rank_(rank), model_(model),
      backend_(backend), config_(config), frees_(planFrees(program, rank)),
      block_(size_t(config.data.rows * config.data.hidden)) {
  const int S = program.stages;
  owned_.resize(S);
  fetched_.resize(S);
  grads_.resize(S);
  std::vector<float> host;
  for (int s : mine_.owns) {
    host.assign(size_t(model.numParams(s)), 0.0f);
    initTiedParams(model, program.ties, program.tieOf, s, host.data());
    owned_[s] = backend.allocate(host.size());
    backend.upload(*owned_[s], host.data());
  }
  lossGrad_ = backend.allocate(block_);
  inputSum_ = backend.allocate(block_);
  gradSum_ = backend.allocate(block_);
}

std::vector<float> Executor::ownedParams(int stage) {
  std::vector<float> host;
  if (mine_.ownsStage(stage)) {
    host.resize(owned_[stage]->size());
    backend_.download(*owned_[stage], host.data());
  }
  return host;
}

double Executor::runStep(int step, Clock::time_point stepStart,
                         std::vector<OpTiming> &timeline) {
  step_ = step;
  auto ns = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - stepStart).count();
  };
  const size_t first = timeline.size();
  backend_.beginStep(step);
  for (size_t i = 0; i < mine_.ops.size(); ++i) {
    const Op &op = mine_.ops[i];
    if (step == 0 && rank_ == config_.failRank && int64_t(i) == config_.failAtOp) {
      std::fprintf(stderr,
                   "pipeline-run: rank %d: injected failure before op %zu (%s)\n",
                   rank_, i, describe(program_, mine_, op).c_str());
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(3);
    }
    Clock::time_point start = Clock::now();
    try {
      backend_.beginOp(i, runsOnCommunicationStream(op.kind));
      if (backend_.failed())
        stalled();
      execute(op);
      if (backend_.failed())
        stalled();
      for (uint32_t k = frees_.offsets[i]; k < frees_.offsets[i + 1]; ++k)
        store_.erase(frees_.ids[k]);
      backend_.endOp();
    } catch (const std::exception &e) {
      abortOnError(e, "in op " + std::to_string(i) + " (" +
                          describe(program_, mine_, op) + ")");
    }
    timeline.push_back(OpTiming{int32_t(step), int32_t(i), ns(start), ns(Clock::now())});
  }
  double lossSum = 0;
  try {
    endStep();
    if (!backend_.finishStep(lossSum))
      stalled();
    backend_.deviceTimes(timeline.data() + first, timeline.size() - first);
  } catch (const std::exception &e) {
    abortOnError(e, "at the end of step " + std::to_string(step + 1));
  }
  return lossSum;
}

void Executor::execute(const Op &op) {
  switch (op.kind) {
  case OpKind::Forward:
    forward(op);
    break;
  case OpKind::Backward:
    backward(op, true, !program_.splitBackward);
    break;
  case OpKind::BackwardWeight:
    backward(op, false, true);
    break;
  case OpKind::LossGrad:
  case OpKind::Jacobian:
  case OpKind::Combine:
    scan(op);
    break;
  case OpKind::Send:
  case OpKind::Recv:
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    transfer(&op, 1);
    break;
  case OpKind::Group:
    transfer(mine_.childrenOf(op), op.count);
    break;
  case OpKind::ReleaseWeights:
    fetchedBytes_ -= fetched_[op.stage]->bytes();
    fetched_[op.stage].reset();
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
    collective(op);
    break;
  case OpKind::OptimizerStep:
    backend_.optimizerStep(op.stage, *owned_[op.stage], gradBuffer(op.stage));
    break;
  case OpKind::TiedGrad:
    if (!config_.skipTiedGrad)
      tiedGrad(op);
    break;
  }
}

// The validator proved every read is preceded by a write on this rank; a
// miss here is a runtime bug, reported rather than dereferenced.
const Buffer &Executor::tensor(int64_t id) const {
  const Buffer *t = store_.find(id);
  if (!t)
    throw std::runtime_error("rank " + std::to_string(rank_) + ": " +
                             describeTensor(program_, id) +
                             " is not in the tensor store");
  return *t;
}

// acc = t0; acc += t1; ... in the listed order (the reference's order).
const Buffer &Executor::sum(const int64_t *ids, uint32_t count, Buffer &scratch) {
  if (count == 1)
    return tensor(ids[0]);
  backend_.copy(scratch, tensor(ids[0]));
  for (uint32_t k = 1; k < count; ++k)
    backend_.add(scratch, tensor(ids[k]));
  return scratch;
}

const Buffer &Executor::input(const int64_t *ids, uint32_t count, int microbatch) {
  if (count == 0)
    return backend_.input(step_, microbatch);
  return sum(ids, count, *inputSum_);
}

const Buffer &Executor::weights(const Op &op) const {
  if (mine_.ownsStage(op.stage))
    return *owned_[op.stage];
  if (fetched_[op.stage])
    return *fetched_[op.stage];
  throw std::runtime_error("rank " + std::to_string(rank_) + ": " +
                           describe(program_, op) + " needs stage " +
                           std::to_string(op.stage) +
                           "'s weights, which it neither owns nor fetched");
}

Buffer &Executor::gradBuffer(int stage) {
  BufferPtr &g = grads_[stage];
  if (!g) {
    g = backend_.allocate(size_t(model_.numParams(stage)));
    backend_.zero(*g);
  }
  return *g;
}

// Reads and writes are in the roles of the stage graph (roles.h; the
// loader checked them): the outputs of the stage's predecessors (none: the
// data), and the stage's output.
void Executor::forward(const Op &op) {
  IdList reads = mine_.reads(op);
  const Buffer &in = input(reads.begin(), reads.size(), op.microbatch);
  BufferPtr out = backend_.allocate(block_);
  backend_.forward(op.stage, weights(op), in, *out);
  if (program_.graph.isSink(op.stage))
    backend_.addLoss(step_, op.microbatch, *out);
  store_.put(mine_.writes(op)[0], std::move(out));
}

// The input gradient (inputGrad) and/or the weight gradient (weightGrad) of
// stage s on microbatch b; the model recomputes the stage's internals from
// its input, so this may run on another rank than the forward. Reads: the
// successors' input gradients (at a sink, its own output, whose loss
// gradient starts the backward), then what the forward read.
void Executor::backward(const Op &op, bool inputGrad, bool weightGrad) {
  const int s = op.stage, b = op.microbatch;
  IdList reads = mine_.reads(op);
  // A scanned backward's weight gradient reads its output's gradient.
  const bool scanned = op.kind == OpKind::BackwardWeight && program_.scanned();
  const uint32_t grads = scanned ? 1u : gradientReads(program_.graph, s);
  const Buffer *gradOut;
  if (scanned) {
    gradOut = &tensor(reads[0]);
  } else if (program_.graph.isSink(s)) {
    backend_.lossGrad(step_, b, tensor(reads[0]), *lossGrad_);
    gradOut = lossGrad_.get();
  } else {
    gradOut = &sum(reads.begin(), grads, *gradSum_);
  }
  const Buffer &in = input(reads.begin() + grads, reads.size() - grads, b);
  IdList writes = mine_.writes(op);
  BufferPtr gradIn;
  if (inputGrad && !writes.empty())
    gradIn = backend_.allocate(block_);
  Buffer *gradParams = weightGrad ? &gradBuffer(s) : nullptr;
  backend_.backward(s, weights(op), in, *gradOut, gradIn.get(), gradParams);
  if (gradIn)
    store_.put(writes[0], std::move(gradIn));
}

size_t Executor::scanFloats(program::ScanValue value) const {
  return size_t(bppsa::tensorFloats(value == program::ScanValue::Vector
                                        ? bppsa::Value::Vector
                                        : bppsa::Value::Jacobian,
                                    config_.jacobians, config_.data.rows,
                                    config_.data.hidden));
}

// The jobs of a scanned backward (docs/bppsa.md): G from the last stage's
// output, a stage's Jacobian from its input, a product of two scan tensors.
void Executor::scan(const Op &op) {
  IdList reads = mine_.reads(op);
  const int64_t id = mine_.writes(op)[0];
  const program::ScanValue value = program_.scanValue[size_t(id - program_.scanBase())];
  BufferPtr out = backend_.allocate(scanFloats(value));
  switch (op.kind) {
  case OpKind::LossGrad:
    backend_.lossGrad(step_, op.microbatch, tensor(reads[0]), *out);
    break;
  case OpKind::Jacobian:
    backend_.jacobian(op.stage, weights(op), input(reads.begin(), reads.size(), op.microbatch),
                      config_.jacobians, *out);
    break;
  default:
    backend_.combine(op.product == program::ScanValue::Vector, tensor(reads[0]),
                     tensor(reads[1]), config_.jacobians, *out);
    break;
  }
  store_.put(id, std::move(out));
}

// One transfer or a group: posted together, complete together. Receives
// land in fresh buffers, stored after the group: a send in the same group
// may still be reading an older copy of the same tensor.
void Executor::transfer(const Op *ops, uint32_t count) {
  std::vector<Transfer> transfers;
  transfers.reserve(count);
  received_.clear();
  for (uint32_t c = 0; c < count; ++c) {
    const Op &op = ops[c];
    switch (op.kind) {
    case OpKind::Send:
      transfers.push_back(
          Transfer{true, const_cast<Buffer *>(&tensor(op.tensor)), op.peer, op.tag});
      break;
    case OpKind::Recv:
      received_.push_back(backend_.allocate(
          program_.isScanTensor(op.tensor)
              ? scanFloats(program_.scanValue[size_t(op.tensor - program_.scanBase())])
              : block_));
      transfers.push_back(Transfer{false, received_.back().get(), op.peer, op.tag});
      break;
    case OpKind::SendWeights:
      transfers.push_back(Transfer{true, owned_[op.stage].get(), op.peer, op.tag});
      break;
    case OpKind::FetchWeights:
      fetched_[op.stage] = backend_.allocate(size_t(model_.numParams(op.stage)));
      transfers.push_back(Transfer{false, fetched_[op.stage].get(), op.peer, op.tag});
      break;
    default:
      break;
    }
  }
  if (!backend_.transfer(transfers.data(), transfers.size()))
    stalled();
  size_t next = 0;
  for (uint32_t c = 0; c < count; ++c) {
    const Op &op = ops[c];
    if (op.kind == OpKind::Recv)
      store_.put(op.tensor, std::move(received_[next++]));
    if (op.kind == OpKind::FetchWeights)
      fetchedBytes_ += fetched_[op.stage]->bytes();
  }
  peakFetchedBytes_ = std::max(peakFetchedBytes_, fetchedBytes_);
}

// Sums the members' gradient buffers of the stage (zeros where a member
// computed nothing). After an allreduce every member holds the sum; after a
// reduce a member other than the root has handed its share over and starts
// again from zero, so that a later collective does not count it twice.
void Executor::collective(const Op &op) {
  Buffer &g = gradBuffer(op.stage);
  bool ok = op.kind == OpKind::AllreduceGrad ? backend_.allreduce(g, op.group)
                                             : backend_.reduce(g, op.root, op.group);
  if (!ok)
    stalled();
  if (op.kind == OpKind::ReduceGrad && op.root != rank_)
    grads_[op.stage].reset();
}

// The tied weight's gradient: the lowest member owning a stage of the tie
// contributes that stage's gradient of the tensor (added in the tie's
// order), the members sum their contributions, and every stage of the tie
// this rank owns takes the sum: each copy then steps with the gradient of
// all the tensor's uses.
void Executor::tiedGrad(const Op &op) {
  const std::vector<int> &stages = program_.ties[size_t(op.tie)];
  const std::vector<int> &members = program_.groups[size_t(op.group)];
  auto contributes = [&](int s) {
    for (int m : members)
      if (program_.ranks[size_t(m)].ownsStage(s))
        return m == rank_;
    return false;
  };
  const ParamTensor first = tiedTensor(model_, stages, stages[0]);
  if (!tiedSum_ || tiedSum_->size() != size_t(first.size))
    tiedSum_ = backend_.allocate(size_t(first.size));
  backend_.zero(*tiedSum_);
  for (int s : stages)
    if (contributes(s)) {
      const ParamTensor t = tiedTensor(model_, stages, s);
      backend_.addRange(*tiedSum_, 0, gradBuffer(s), size_t(t.offset), size_t(t.size));
    }
  if (members.size() > 1 && !backend_.allreduce(*tiedSum_, op.group))
    stalled();
  for (int s : stages)
    if (mine_.ownsStage(s)) {
      const ParamTensor t = tiedTensor(model_, stages, s);
      backend_.copyRange(gradBuffer(s), size_t(t.offset), *tiedSum_, 0, size_t(t.size));
    }
}

// Nothing outlives a step but owned weights, their optimizer state and the
// gradients owners have not applied yet.
void Executor::endStep() {
  store_.clear();
  for (int s = 0; s < program_.stages; ++s) {
    if (!mine_.ownsStage(s))
      grads_[s].reset();
    fetched_[s].reset();
  }
  fetchedBytes_ = 0;
}

// The backend names the op a wait gave up in (with an asynchronous backend,
// possibly an earlier one than the current) and, for a group, the transfers
// still pending: printed, then the job ends (abortJob aborts the backend
// first, bounded: train() registers it).
void Executor::stalled() const {
  const Stall &st = backend_.stall();
  const Op &op = mine_.ops.at(st.op);
  std::string what;
  const Op *children = op.kind == OpKind::Group ? mine_.childrenOf(op) : &op;
  for (size_t p : st.pending)
    what += (what.empty() ? "" : "; ") + describe(program_, children[p]);
  if (what.empty())
    what = describe(program_, mine_, op);
  if (st.error.empty())
    abortJob(2, "pipeline-run: rank %d timed out after %.1f s in op %zu (%s)", rank_,
             backend_.timeout(), st.op, what.c_str());
  abortJob(2, "pipeline-run: rank %d: %s in op %zu (%s)", rank_, st.error.c_str(), st.op,
           what.c_str());
}

// An error inside a step (a CUDA or cuBLAS error, a model library's) ends
// the job here, where the op is known. Unwinding to main() would first run
// the backend's destructor, which under cuda waits for the streams and for
// NCCL's peers: the job would end in a peer's timeout, this error unseen.
void Executor::abortOnError(const std::exception &e, const std::string &where) const {
  abortJob(1, "pipeline-run: rank %d: %s %s", rank_, errorText(e).c_str(), where.c_str());
}

} // namespace pipesched::runtime
