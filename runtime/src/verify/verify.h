// --verify: after the distributed run, rank 0 gathers every stage's weights
// from all its owners, checks that replicas are bitwise identical, runs the
// sequential reference (reference.h) and compares weights and losses.
#pragma once

#include "model/data.h"
#include "model/model.h"
#include "model/optimizer.h"
#include "program/program.h"

#include <mpi.h>

#include <vector>

namespace pipesched::runtime {

struct VerifyInputs {
  const Program *program;
  // This rank's parameters of each stage it owns (nullptr elsewhere).
  std::vector<const std::vector<float> *> owned;
  std::vector<double> losses; // per step, on rank 0
  DataSpec data;
  OptimizerConfig optimizer;
  int steps;
  double tolerance;
  // --timeout: every wait of the verification is bounded by it (while rank
  // 0 runs the reference, its heartbeats keep the others' deadline alive).
  double timeout;
};

// Collective over `world`. Rank 0 prints the findings; every rank returns
// the verdict.
bool verifyRun(MPI_Comm world, int rank, Model &model, const VerifyInputs &in);

} // namespace pipesched::runtime
