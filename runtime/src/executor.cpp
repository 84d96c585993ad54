#include "executor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace pipesched::runtime {

Executor::Executor(const Program &program, int rank, Model &model,
                   Transport &transport, const ExecutorConfig &config)
    : program_(program), mine_(program.ranks[rank]), rank_(rank), model_(model),
      transport_(transport), config_(config), frees_(planFrees(program, rank)),
      block_(config.data.rows * config.data.hidden) {
  const int S = program.stages;
  owned_.resize(S);
  fetched_.resize(S);
  grads_.resize(S);
  hasFetched_.assign(S, 0);
  optimizerState_.resize(S);
  for (int s : mine_.owns) {
    owned_[s].resize(size_t(model.numParams(s)));
    model.init(s, owned_[s].data());
  }
  inputScratch_.resize(size_t(block_));
  lossGrad_.resize(size_t(block_));
}

const std::vector<float> *Executor::ownedParams(int stage) const {
  return mine_.ownsStage(stage) ? &owned_[stage] : nullptr;
}

double Executor::runStep(int step, Clock::time_point stepStart,
                         std::vector<OpTiming> &timeline) {
  step_ = step;
  lossSum_ = 0;
  auto ns = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - stepStart).count();
  };
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
    execute(op, i);
    for (uint32_t k = frees_.offsets[i]; k < frees_.offsets[i + 1]; ++k)
      store_.erase(frees_.keys[k]);
    timeline.push_back(OpTiming{int32_t(step), int32_t(i), ns(start), ns(Clock::now())});
  }
  endStep();
  return lossSum_;
}

void Executor::execute(const Op &op, size_t index) {
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
  case OpKind::Send:
  case OpKind::Recv:
  case OpKind::SendWeights:
  case OpKind::FetchWeights:
    transfer(&op, 1, index);
    break;
  case OpKind::Group:
    transfer(mine_.childrenOf(op), op.numChildren, index);
    break;
  case OpKind::ReleaseWeights:
    fetchedBytes_ -= fetched_[op.stage].size() * sizeof(float);
    std::vector<float>().swap(fetched_[op.stage]);
    hasFetched_[op.stage] = 0;
    break;
  case OpKind::AllreduceGrad:
  case OpKind::ReduceGrad:
    collective(op, index);
    break;
  case OpKind::OptimizerStep:
    optimizerStep(op);
    break;
  }
}

// The validator proved every read is preceded by a write on this rank; a
// miss here is a runtime bug, reported rather than dereferenced.
const std::vector<float> &Executor::tensor(uint64_t key) const {
  const std::vector<float> *t = store_.find(key);
  if (!t)
    throw std::runtime_error("rank " + std::to_string(rank_) + ": " +
                             describeKey(key) + " is not in the tensor store");
  return *t;
}

const float *Executor::input(int stage, int microbatch) {
  if (stage == 0) {
    makeInput(config_.data, step_, microbatch, inputScratch_.data());
    return inputScratch_.data();
  }
  return tensor(tensorKey(TensorKind::Act, stage - 1, microbatch)).data();
}

const float *Executor::weights(const Op &op) const {
  if (mine_.ownsStage(op.stage))
    return owned_[op.stage].data();
  if (hasFetched_[op.stage])
    return fetched_[op.stage].data();
  throw std::runtime_error("rank " + std::to_string(rank_) + ": " +
                           describe(program_, op) + " needs stage " +
                           std::to_string(op.stage) +
                           "'s weights, which it neither owns nor fetched");
}

std::vector<float> &Executor::gradBuffer(int stage) {
  std::vector<float> &g = grads_[stage];
  if (g.empty())
    g.assign(size_t(model_.numParams(stage)), 0.0f);
  return g;
}

void Executor::forward(const Op &op) {
  const float *in = input(op.stage, op.microbatch);
  std::vector<float> &out =
      store_.put(tensorKey(TensorKind::Act, op.stage, op.microbatch), size_t(block_));
  model_.forward(op.stage, weights(op), config_.data.rows, in, out.data());
  if (op.stage + 1 == program_.stages)
    lossSum_ += lossAndGrad(config_.data, step_, op.microbatch, out.data(), nullptr);
}

// The input gradient (inputGrad) and/or the weight gradient (weightGrad) of
// stage s on microbatch b; the model recomputes the stage's internals from
// its input, so this may run on another rank than the forward.
void Executor::backward(const Op &op, bool inputGrad, bool weightGrad) {
  const int s = op.stage, b = op.microbatch;
  const float *gradOut;
  if (s + 1 == program_.stages) {
    const std::vector<float> &y = tensor(tensorKey(TensorKind::Act, s, b));
    lossAndGrad(config_.data, step_, b, y.data(), lossGrad_.data());
    gradOut = lossGrad_.data();
  } else {
    gradOut = tensor(tensorKey(TensorKind::Grad, s + 1, b)).data();
  }
  const float *in = input(s, b);
  float *gradIn = nullptr;
  if (inputGrad && s > 0)
    gradIn = store_.put(tensorKey(TensorKind::Grad, s, b), size_t(block_)).data();
  float *gradParams = weightGrad ? gradBuffer(s).data() : nullptr;
  model_.backward(s, weights(op), config_.data.rows, in, gradOut, gradIn, gradParams);
}

// One transfer or a group: post everything, then wait for all. Receives
// land in fresh buffers, stored once the group completes: a send in the
// same group may still be reading an older copy of the same tensor.
void Executor::transfer(const Op *ops, uint32_t count, size_t index) {
  received_.clear();
  received_.reserve(count);
  for (uint32_t c = 0; c < count; ++c) {
    const Op &op = ops[c];
    switch (op.kind) {
    case OpKind::Send: {
      const std::vector<float> &t = tensor(tensorKey(op.tensor, op.stage, op.microbatch));
      transport_.postSend(t.data(), t.size(), op.peer, op.tag);
      break;
    }
    case OpKind::Recv: {
      received_.emplace_back(size_t(block_));
      transport_.postRecv(received_.back().data(), size_t(block_), op.peer, op.tag);
      break;
    }
    case OpKind::SendWeights:
      transport_.postSend(owned_[op.stage].data(), owned_[op.stage].size(),
                          op.peer, op.tag);
      break;
    case OpKind::FetchWeights: {
      std::vector<float> &w = fetched_[op.stage];
      w.assign(size_t(model_.numParams(op.stage)), 0.0f);
      transport_.postRecv(w.data(), w.size(), op.peer, op.tag);
      break;
    }
    default:
      break;
    }
  }
  std::vector<size_t> pending;
  if (!transport_.waitPosted(pending)) {
    std::string what;
    for (size_t p : pending)
      what += (what.empty() ? "" : "; ") + describe(program_, ops[p]);
    timedOut(index, what);
  }
  size_t next = 0;
  for (uint32_t c = 0; c < count; ++c) {
    const Op &op = ops[c];
    if (op.kind == OpKind::Recv)
      store_.adopt(tensorKey(op.tensor, op.stage, op.microbatch),
                   std::move(received_[next++]));
    if (op.kind == OpKind::FetchWeights) {
      hasFetched_[op.stage] = 1;
      fetchedBytes_ += fetched_[op.stage].size() * sizeof(float);
    }
  }
  peakFetchedBytes_ = std::max(peakFetchedBytes_, fetchedBytes_);
}

// Sums the members' gradient buffers of the stage (zeros where a member
// computed nothing). After an allreduce every member holds the sum; after a
// reduce a member other than the root has handed its share over and starts
// again from zero, so that a later collective does not count it twice.
void Executor::collective(const Op &op, size_t index) {
  std::vector<float> &g = gradBuffer(op.stage);
  bool ok = op.kind == OpKind::AllreduceGrad
                ? transport_.allreduce(g.data(), g.size(), op.group)
                : transport_.reduce(g.data(), g.size(), op.root, op.group);
  if (!ok)
    timedOut(index, describe(program_, op));
  if (op.kind == OpKind::ReduceGrad && op.root != rank_)
    std::vector<float>().swap(g);
}

void Executor::optimizerStep(const Op &op) {
  std::vector<float> &g = gradBuffer(op.stage);
  std::vector<float> &w = owned_[op.stage];
  applyOptimizer(config_.optimizer, optimizerState_[op.stage], w.data(), g.data(),
                 w.size());
  std::fill(g.begin(), g.end(), 0.0f);
}

// Nothing outlives a step but owned weights, their optimizer state and the
// gradients owners have not applied yet.
void Executor::endStep() {
  store_.clear();
  for (int s = 0; s < program_.stages; ++s) {
    if (!mine_.ownsStage(s))
      std::vector<float>().swap(grads_[s]);
    std::vector<float>().swap(fetched_[s]);
    hasFetched_[s] = 0;
  }
  fetchedBytes_ = 0;
}

void Executor::timedOut(size_t index, const std::string &what) const {
  std::fprintf(stderr, "pipeline-run: rank %d timed out after %.1f s in op %zu (%s)\n",
               rank_, transport_.timeout(), index, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort(); // MPI_Abort does not return
}

} // namespace pipesched::runtime
