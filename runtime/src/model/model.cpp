#include "model/model.h"

#include "model/bppsa_exec.h"

#include "model/mlp_stage.h"

#include <dlfcn.h>

#include <stdexcept>

namespace pipesched::runtime {

Model::Model(const ModelShape &shape)
    : shape_(shape), api_(builtinMlpApi(shape.activation)), name_(api_->name) {}

Model::Model(const ModelShape &shape, const std::string &libraryPath)
    : shape_(shape), name_(libraryPath) {
  // RTLD_LOCAL: two libraries may export the same symbol names.
  handle_ = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw std::runtime_error("cannot load model library: " + std::string(dlerror()));
  auto get = reinterpret_cast<pipesched_stage_get_api_fn>(
      dlsym(handle_, PIPESCHED_STAGE_API_SYMBOL));
  if (!get) {
    dlclose(handle_);
    throw std::runtime_error("model library " + libraryPath + " does not export " +
                             PIPESCHED_STAGE_API_SYMBOL);
  }
  api_ = get(PIPESCHED_STAGE_ABI_VERSION);
  if (!api_ || api_->abi_version != PIPESCHED_STAGE_ABI_VERSION || !api_->num_params ||
      !api_->workspace_floats || !api_->init || !api_->forward || !api_->backward) {
    dlclose(handle_);
    throw std::runtime_error("model library " + libraryPath +
                             " does not implement stage ABI version " +
                             std::to_string(PIPESCHED_STAGE_ABI_VERSION));
  }
  if (api_->name)
    name_ = std::string(api_->name) + " (" + libraryPath + ")";
}

Model::~Model() {
  if (handle_)
    dlclose(handle_);
}

pipesched_stage_config Model::config(int stage) const {
  pipesched_stage_config c{};
  c.abi_version = PIPESCHED_STAGE_ABI_VERSION;
  c.stage = stage;
  c.num_stages = shape_.stages;
  c.hidden = shape_.hidden;
  c.layers = shape_.layersOf(stage);
  c.seed = shape_.seed;
  return c;
}

void Model::check(int rc, const char *function, int stage) const {
  if (rc != 0)
    throw std::runtime_error(name_ + ": " + function + " of stage " +
                             std::to_string(stage) + " failed with code " +
                             std::to_string(rc));
}

int64_t Model::numParams(int stage) const {
  pipesched_stage_config c = config(stage);
  int64_t n = api_->num_params(&c);
  if (n < 0)
    throw std::runtime_error(name_ + ": num_params of stage " +
                             std::to_string(stage) + " is negative");
  return n;
}

std::vector<ParamTensor> Model::paramLayout(int stage) const {
  if (!handle_) // the built-in MLP, either activation
    return mlpParamLayout(config(stage));
  return {ParamTensor{0, numParams(stage), -1, ParamTensor::Kind::Whole}};
}

void Model::init(int stage, float *params) const {
  pipesched_stage_config c = config(stage);
  check(api_->init(&c, params), "init", stage);
}

float *Model::workspace(int stage, int64_t rows) {
  pipesched_stage_config c = config(stage);
  int64_t n = api_->workspace_floats(&c, rows);
  if (n < 0)
    throw std::runtime_error(name_ + ": workspace_floats is negative");
  if (workspace_.size() < size_t(n))
    workspace_.resize(size_t(n));
  return workspace_.data();
}

void Model::forward(int stage, const float *params, int64_t rows,
                    const float *input, float *output) {
  pipesched_stage_config c = config(stage);
  float *ws = workspace(stage, rows);
  check(api_->forward(&c, params, rows, input, output, ws), "forward", stage);
}

void Model::backward(int stage, const float *params, int64_t rows,
                     const float *input, const float *gradOutput,
                     float *gradInput, float *gradParams) {
  pipesched_stage_config c = config(stage);
  float *ws = workspace(stage, rows);
  // The library accumulates into a zeroed buffer, added to gradParams after:
  // gradParams = ((P0 + P1) + P2) ... one microbatch gradient P_b at a time,
  // so a reduction of per-rank sums can match the reference bit for bit.
  float *partial = nullptr;
  if (gradParams) {
    partial_.assign(size_t(numParams(stage)), 0.0f);
    partial = partial_.data();
  }
  check(api_->backward(&c, params, rows, input, gradOutput, gradInput, partial, ws),
        "backward", stage);
  for (size_t k = 0; gradParams && k < partial_.size(); ++k)
    gradParams[k] += partial_[k];
}

} // namespace pipesched::runtime

namespace pipesched::runtime {

void Model::jacobian(int stage, const float *params, int64_t rows, const float *input,
                     bppsa::Storage storage, float *out) const {
  if (handle_)
    throw std::runtime_error(name_ + ": a scanned backward (BPPSA) needs the built-in "
                                     "MLP's Jacobians; a model library has none");
  bppsa::writeJacobian(config(stage), shape_.activation, params, rows, input, storage,
                       out);
}

} // namespace pipesched::runtime
