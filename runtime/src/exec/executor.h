// Runs one rank's program for one training step (docs/program-format.md):
// the op sequencing (weights owned or fetched, gradient buffers, tensors in
// a TensorStore freed after their last use, fault injection, timings) is
// here; memory, compute and communication go through a Backend (backend.h).
#pragma once

#include "exec/backend.h"
#include "exec/liveness.h"
#include "exec/tensor_store.h"
#include "model/bppsa_exec.h"
#include "model/data.h"
#include "model/model.h"
#include "model/ties.h"
#include "program/program.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace pipesched::runtime {

struct ExecutorConfig {
  DataSpec data;
  bppsa::Storage jacobians = bppsa::Storage::Dense; // --jacobians
  int failRank = -1;     // --fail-rank
  int64_t failAtOp = -1; // --fail-at-op (first step)
  bool skipTiedGrad = false; // --skip-tied-grad
};

class Executor {
public:
  using Clock = std::chrono::steady_clock;

  // Initializes the weights of the stages this rank owns (model.init on the
  // host, then uploaded).
  Executor(const Program &program, int rank, const Model &model, Backend &backend,
           const ExecutorConfig &config);

  // Runs the program once. Returns the sum of the losses of the sink-stage
  // forwards that ran on this rank; appends one OpTiming per op.
  double runStep(int step, Clock::time_point stepStart,
                 std::vector<OpTiming> &timeline);

  // A host copy of this rank's parameters of an owned stage (empty if not
  // owned).
  std::vector<float> ownedParams(int stage);
  size_t peakTensorBytes() const { return store_.peakBytes(); }
  size_t peakFetchedBytes() const { return peakFetchedBytes_; }

private:
  void execute(const Op &op);
  void forward(const Op &op);
  void backward(const Op &op, bool inputGrad, bool weightGrad);
  void scan(const Op &op);
  // Floats of a scan tensor that holds `value` (bppsa_exec.h's layout).
  size_t scanFloats(program::ScanValue value) const;
  void transfer(const Op *ops, uint32_t count);
  void collective(const Op &op);
  void tiedGrad(const Op &op);
  void endStep();
  [[noreturn]] void stalled() const;
  // Prints "pipeline-run: rank R: <error> <where>" and ends the job.
  [[noreturn]] void abortOnError(const std::exception &e, const std::string &where) const;

  // The sum of `ids` in order into `scratch` (a single id: that tensor).
  const Buffer &sum(const int64_t *ids, uint32_t count, Buffer &scratch);
  // A stage's input: the microbatch's data, or the sum of its inputs.
  const Buffer &input(const int64_t *ids, uint32_t count, int microbatch);
  const Buffer &tensor(int64_t id) const;
  const Buffer &weights(const Op &op) const;
  Buffer &gradBuffer(int stage);

  const Program &program_;
  const RankProgram &mine_;
  int rank_;
  const Model &model_;
  Backend &backend_;
  ExecutorConfig config_;
  FreePlan frees_;
  TensorStore store_;
  int step_ = 0;
  size_t block_; // floats of one boundary tensor: rows x hidden

  std::vector<BufferPtr> owned_, fetched_, grads_;
  size_t fetchedBytes_ = 0, peakFetchedBytes_ = 0;
  BufferPtr lossGrad_;
  // Fan-in sums: a stage's input, a fan-out stage's output gradient.
  BufferPtr inputSum_, gradSum_;
  BufferPtr tiedSum_; // a tied weight's summed gradient (tied_grad)
  std::vector<BufferPtr> received_; // a group's receives in flight
};

} // namespace pipesched::runtime
