// BPPSA on the CPU (docs/bppsa.md): executes the scan graph that the
// compiler's algorithm layer builds (lib/Scheduling/Bppsa.cpp, compiled in
// by path like the deadlock check) for one microbatch of the built-in MLP:
// per-row transposed Jacobians of each stage, their products in the
// graph's order, and each stage's weight gradient from its prefix through
// the stage's own backward (weight half only). Dense Jacobians; the CSR
// form is still to come. Used by the unit tests now, by the executor later.
#pragma once

#include "pipesched/Scheduling/Bppsa.h"
#include "pipesched/runtime/stage_abi.h"

#include <cstdint>
#include <vector>

namespace pipesched::runtime {

// Stage s's transposed Jacobian at `input` (rows x H), one H x H block per
// row, row-major: grad_in[r] = J[r] grad_out[r], with
// J[r] = M_0 M_1 ... M_{L-1}, M_l[i][o] = W_l[o][i] gelu'(z_l[r][o]).
std::vector<float> stageJacobian(const pipesched_stage_config &config,
                                 const float *params, int64_t rows,
                                 const float *input);

struct BppsaBackward {
  std::vector<std::vector<float>> outputGradients; // g_s, rows x H each
  std::vector<std::vector<float>> weightGradients; // per stage
};

// Runs microbatch 0 of `graph` (built for `shape`, a chain of
// shape.stages built-in MLP stages of `config`'s width and layers):
// `inputs[s]` is stage s's input activation, `lossGradient` G.
BppsaBackward runBppsa(const scheduling::BppsaShape &shape,
                       const scheduling::BppsaGraph &graph,
                       pipesched_stage_config config,
                       const std::vector<std::vector<float>> &params,
                       const std::vector<std::vector<float>> &inputs,
                       const std::vector<float> &lossGradient);

} // namespace pipesched::runtime
