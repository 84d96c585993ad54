// Runs one rank's program for one training step (docs/program-format.md):
// compute through the Model, transfers and collectives through the
// Transport, tensors in a TensorStore freed after their last use.
#pragma once

#include "data.h"
#include "liveness.h"
#include "model.h"
#include "optimizer.h"
#include "program.h"
#include "tensor_store.h"
#include "transport.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

struct ExecutorConfig {
  DataSpec data;
  OptimizerConfig optimizer;
  int failRank = -1;     // --fail-rank
  int64_t failAtOp = -1; // --fail-at-op (first step)
};

// One executed op: its index in the rank's program and when it ran,
// in nanoseconds since the start of its step.
struct OpTiming {
  int32_t step, op;
  int64_t startNs, endNs;
};

class Executor {
public:
  using Clock = std::chrono::steady_clock;

  // Initializes the weights of the stages this rank owns.
  Executor(const Program &program, int rank, Model &model, Transport &transport,
           const ExecutorConfig &config);

  // Runs the program once. Returns the sum of loss_b over the microbatches
  // whose last-stage forward ran on this rank; appends one OpTiming per op.
  double runStep(int step, Clock::time_point stepStart,
                 std::vector<OpTiming> &timeline);

  // This rank's copy of an owned stage's parameters (nullptr if not owned).
  const std::vector<float> *ownedParams(int stage) const;
  size_t peakTensorBytes() const { return store_.peakBytes(); }
  size_t peakFetchedBytes() const { return peakFetchedBytes_; }

private:
  void execute(const Op &op, size_t index);
  void forward(const Op &op);
  void backward(const Op &op, bool inputGrad, bool weightGrad);
  void transfer(const Op *ops, uint32_t count, size_t index);
  void collective(const Op &op, size_t index);
  void optimizerStep(const Op &op);
  void endStep();
  [[noreturn]] void timedOut(size_t index, const std::string &what) const;

  const float *input(int stage, int microbatch);
  const std::vector<float> &tensor(uint64_t key) const;
  const float *weights(const Op &op) const;
  std::vector<float> &gradBuffer(int stage);

  const Program &program_;
  const RankProgram &mine_;
  int rank_;
  Model &model_;
  Transport &transport_;
  ExecutorConfig config_;
  FreePlan frees_;
  TensorStore store_;
  int step_ = 0;
  double lossSum_ = 0;
  int64_t block_; // floats of one boundary tensor: rows x hidden

  std::vector<std::vector<float>> owned_, fetched_, grads_;
  std::vector<char> hasFetched_;
  std::vector<OptimizerState> optimizerState_;
  size_t fetchedBytes_ = 0, peakFetchedBytes_ = 0;
  std::vector<float> inputScratch_, lossGrad_;
  std::vector<std::vector<float>> received_; // a group's receives in flight
};

} // namespace pipesched::runtime
