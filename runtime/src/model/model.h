// A model: the stage functions, reached through the C ABI (stage_abi.h),
// either the built-in MLP or a library loaded with dlopen. How stages
// connect (the stage graph) is the program's business, not the model's.
#pragma once

#include "model/mlp_stage.h"
#include "model/param_layout.h"
#include "pipesched/runtime/stage_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

namespace bppsa {
enum class Storage : uint8_t;
} // namespace bppsa

struct ModelShape {
  int stages = 1;
  int64_t hidden = 64;
  int64_t layers = 1; // per stage (--layers-per-stage)
  uint64_t seed = 1;
  Activation activation = Activation::Gelu; // the built-in MLP's (--activation)
  // Stage s has stageLayers[s] layers when given (a partition, the
  // program's `layers`); empty: `layers` each.
  std::vector<int64_t> stageLayers = {};
  int64_t layersOf(int stage) const {
    return stageLayers.empty() ? layers : stageLayers[size_t(stage)];
  }
};

class Model {
public:
  // The built-in MLP.
  explicit Model(const ModelShape &shape);
  // A model library; throws std::runtime_error when it cannot be loaded.
  Model(const ModelShape &shape, const std::string &libraryPath);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const ModelShape &shape() const { return shape_; }
  const std::string &name() const { return name_; }

  int64_t numParams(int stage) const;
  // The tensors of a stage's parameters: the built-in MLP's layers; a
  // library's parameters as one tensor (the ABI does not describe them).
  std::vector<ParamTensor> paramLayout(int stage) const;
  void init(int stage, float *params) const;
  // Boundary tensors are rows x hidden. backward adds this microbatch's
  // weight gradient to gradParams (when not null). Throws std::runtime_error
  // when the library reports a failure.
  void forward(int stage, const float *params, int64_t rows, const float *input,
               float *output);
  void backward(int stage, const float *params, int64_t rows,
                const float *input, const float *gradOutput, float *gradInput,
                float *gradParams);

  // A scanned backward (BPPSA): stage's transposed Jacobian at `input` into
  // out (bppsa_exec.h's layout). The built-in MLP only (a library's ABI has
  // no Jacobians): throws std::runtime_error otherwise.
  void jacobian(int stage, const float *params, int64_t rows, const float *input,
                bppsa::Storage storage, float *out) const;

private:
  pipesched_stage_config config(int stage) const;
  void check(int rc, const char *function, int stage) const;
  float *workspace(int stage, int64_t rows);

  ModelShape shape_;
  const pipesched_stage_api *api_ = nullptr;
  void *handle_ = nullptr; // dlopen handle of a library
  std::string name_;
  std::vector<float> workspace_, partial_;
};

} // namespace pipesched::runtime
