// BPPSA on the CPU (docs/bppsa.md): the tensors of a scanned backward and
// the two computations on them, for the built-in MLP: a stage's transposed
// Jacobian, and a product of the scan (A <> B = B A). The executor runs
// them per op (sched.jacobian, sched.combine); runBppsa runs a whole graph
// of the compiler's algorithm layer (lib/Scheduling/Bppsa.cpp, compiled in
// by path) for one microbatch, for the unit tests and the benchmark.
//
// Layout. A scan vector is rows x H floats (like a gradient). A scan matrix
// is `rows` blocks, block r the transposed Jacobian J[r] (H x H, grad_in[r]
// = J[r] grad_out[r]):
//  - dense: row-major, H * H floats per block;
//  - CSR: per block a fixed capacity of 2 + H + 2 H^2 floats: nnz, the H + 1
//    row offsets, then H^2 column indices (int32, bit-cast into the float
//    slots) and H^2 values, of which the first nnz are used; columns
//    ascending within a row, exact zeros dropped.
// Sizes depend only on (what, storage, rows, H), so a receiver allocates
// before the data arrives. Sums run in double, k ascending, so dense and
// CSR results agree bit for bit (a skipped zero adds nothing).
#pragma once

#include "model/mlp_stage.h"
#include "pipesched/Scheduling/Bppsa.h"
#include "pipesched/runtime/stage_abi.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace pipesched::runtime {
namespace bppsa {

enum class Storage : uint8_t { Dense, Csr };
std::optional<Storage> storageNamed(std::string_view name); // "dense", "csr"
std::string_view storageName(Storage storage);

enum class Value : uint8_t { Vector, Jacobian };

int64_t tensorFloats(Value value, Storage storage, int64_t rows, int64_t H);

// Writes stage c.stage's transposed Jacobian at `input` (rows x H, the
// stage's input) into out[tensorFloats(Jacobian, storage, rows, H)]:
// J[r] = M_0 ... M_{L-1}, M_l[i][o] = W_l[o][i] f'(z_l[r][o]).
void writeJacobian(const pipesched_stage_config &c, Activation act, const float *params,
                   int64_t rows, const float *input, Storage storage, float *out);

// out = left <> right = right * left, per row: JV when leftValue is a Vector
// (out a vector), JJ otherwise (out a matrix in `storage`). `right` is a
// matrix; out must not alias an input.
void combine(Value leftValue, const float *left, const float *right, Storage storage,
             int64_t rows, int64_t H, float *out);

// The nonzeros of a scan matrix (all H^2 per block when dense).
int64_t nonzeros(const float *matrix, Storage storage, int64_t rows, int64_t H);

// A scan matrix as dense blocks (rows x H x H), for tests.
std::vector<float> toDense(const float *matrix, Storage storage, int64_t rows, int64_t H);

} // namespace bppsa

struct BppsaBackward {
  std::vector<std::vector<float>> outputGradients; // g_s, rows x H each
  std::vector<std::vector<float>> weightGradients; // per stage
};

// Runs microbatch 0 of `graph` (built for `shape`, a chain of shape.stages
// built-in MLP stages of `config`'s width and layers): `inputs[s]` is stage
// s's input activation, `lossGradient` G. With `jobSeconds`, also the wall
// time of each job, by index (the benchmark's calibration).
BppsaBackward runBppsa(const scheduling::BppsaShape &shape,
                       const scheduling::BppsaGraph &graph,
                       pipesched_stage_config config, Activation act,
                       bppsa::Storage storage,
                       const std::vector<std::vector<float>> &params,
                       const std::vector<std::vector<float>> &inputs,
                       const std::vector<float> &lossGradient,
                       std::vector<double> *jobSeconds = nullptr);

} // namespace pipesched::runtime
