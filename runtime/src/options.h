// Command line of pipeline-run.
#pragma once

#include "data.h"
#include "optimizer.h"

#include <cstdint>
#include <optional>
#include <string>

namespace pipesched::runtime {

struct Options {
  std::string program; // positional
  int64_t hidden = 64, batch = 8, layers = 1;
  uint64_t seed = 1;
  int steps = 3;
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double lr = -1; // < 0: 0.05 for SGD, 0.01 for Adam
  LossKind loss = LossKind::Mse;
  double timeout = 60;
  int failRank = -1;
  int64_t failAtOp = -1;
  std::string timeline;
  bool verify = false;
  double tolerance = 1e-5;
  bool referenceOnly = false;
  bool check = false; // validate only
  int stages = 0, microbatches = 0; // --reference-only without a program
  std::string modelLib;
  std::string backend = "cpu"; // or "cuda"
  bool help = false;

  float learningRate() const {
    return float(lr >= 0 ? lr : optimizer == OptimizerKind::Adam ? 0.01 : 0.05);
  }
};

// Parses argv; returns an error message, or nothing on success.
std::optional<std::string> parseOptions(int argc, char **argv, Options &out);
const char *usage();

} // namespace pipesched::runtime
