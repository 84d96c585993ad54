// Command line of pipeline-run.
#pragma once

#include "model/data.h"
#include "model/optimizer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipesched::runtime {

// Where stages compute and tensors move (--backend): the host over MPI, or
// GPUs (cuBLAS; NCCL or MPI, --gpu-comm).
enum class BackendKind { Cpu, Cuda };

// How --backend cuda moves tensors between ranks: NCCL (a GPU per rank), or
// MPI through pinned host memory (ranks may share a GPU).
enum class GpuComm { Nccl, Mpi };

struct Options {
  std::string program; // positional
  int64_t hidden = 64, batch = 8, layers = 1;
  uint64_t seed = 1;
  int steps = 3;
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double lr = -1; // < 0: 0.05 for SGD, 0.01 for Adam
  LossKind loss = LossKind::Mse;
  double timeout = 60;
  double setupTimeout = -1; // < 0: max(120, timeout)
  int failRank = -1;
  int64_t failAtOp = -1;
  bool skipTiedGrad = false; // fault injection: run no tied_grad
  std::string timeline;
  std::string trace;   // --trace: Chrome trace of the measured timeline
  std::string profile; // --profile: the measured cost file
  bool verify = false;
  double tolerance = 1e-5;
  bool referenceOnly = false;
  bool check = false; // validate only
  int stages = 0, microbatches = 0; // --reference-only without a program
  std::string modelLib;
  BackendKind backend = BackendKind::Cpu;
  GpuComm gpuComm = GpuComm::Nccl;
  // How a scanned backward (BPPSA) holds its Jacobians: "dense" or "csr".
  std::string jacobians = "dense";
  bool relu = false; // --activation relu: the built-in MLP with ReLU
  bool help = false;

  float learningRate() const {
    return float(lr >= 0 ? lr : optimizer == OptimizerKind::Adam ? 0.01 : 0.05);
  }
  // The deadline of the start-up (MPI_Init, and the CUDA backend's set-up:
  // NCCL's communicators, the GPU warm-up) and of NCCL's tear-down:
  // starting every process and bootstrapping over the network take seconds
  // at scale, so a short --timeout (meant for the steps) does not apply.
  double setupDeadline() const {
    return setupTimeout >= 0 ? setupTimeout : std::max(120.0, timeout);
  }
};

// --backend's spelling of `kind`: "cpu" or "cuda".
const char *backendName(BackendKind kind);

// Parses argv; returns an error message, or nothing on success.
std::optional<std::string> parseOptions(int argc, char **argv, Options &out);

// One option as every rank must have it: its name and its value as text.
struct SharedOption {
  const char *name;
  std::string value;
};

// The options every rank of a job must be given alike, in a fixed order:
// all that change the model, the data, the training, the checks, the mode
// or what the ranks do together (--timeout's deadlines, whether an output
// is gathered); not the path rank 0 writes an output to, nor the program's
// (the ranks compare what they read instead). Values are effective ones:
// --lr 0.05 and no --lr with sgd agree.
std::vector<SharedOption> sharedOptions(const Options &o);

const char *usage();

} // namespace pipesched::runtime
