#include "model/mlp_stage.h"

#include "model/kernels.h"
#include "pipesched/runtime/rng.h"

#include <cmath>

namespace pipesched::runtime {
namespace {

using namespace kernels;

// Parameters per layer: W (H x H, [out][in]) then b (H).
int64_t layerParams(const pipesched_stage_config *c) {
  return c->hidden * c->hidden + c->hidden;
}

int64_t numParams(const pipesched_stage_config *c) {
  return c->layers * layerParams(c);
}

// Workspace, in blocks of rows x H: Z_0..Z_{L-1} (pre-activations), then
// A_1..A_{L-1} (inputs of layers 1..), then two gradient blocks.
int64_t workspaceFloats(const pipesched_stage_config *c, int64_t rows) {
  return (2 * c->layers + 1) * rows * c->hidden;
}

int init(const pipesched_stage_config *c, float *params) {
  const int64_t H = c->hidden;
  const float scale = 1.0f / std::sqrt(float(H));
  for (int64_t l = 0; l < c->layers; ++l) {
    float *w = params + l * layerParams(c);
    uint64_t key = pipesched_rng_key(c->seed, PIPESCHED_RNG_WEIGHTS,
                                     uint64_t(c->stage), uint64_t(l));
    for (int64_t k = 0; k < H * H; ++k)
      w[k] = pipesched_rng_uniform(key, uint64_t(k)) * scale;
    for (int64_t k = 0; k < H; ++k)
      w[H * H + k] = 0.0f;
  }
  return 0;
}

// Runs the layers, keeping Z_l and A_l in the workspace; the last layer's
// activation goes to `output` (skipped when null: backward's recompute).
template <Activation A>
void run(const pipesched_stage_config *c, const float *params, int64_t rows,
         const float *input, float *output, float *ws) {
  const int64_t H = c->hidden, L = c->layers, block = rows * H;
  const float *a = input;
  for (int64_t l = 0; l < L; ++l) {
    const float *w = params + l * layerParams(c);
    float *z = ws + l * block;
    linearForward(a, w, w + H * H, z, rows, H, H);
    float *next = l + 1 == L ? output : ws + (L + l) * block;
    if (next)
      activationForward(A, z, next, block);
    a = next;
  }
}

template <Activation A>
int forward(const pipesched_stage_config *c, const float *params, int64_t rows,
            const float *input, float *output, float *ws) {
  run<A>(c, params, rows, input, output, ws);
  return 0;
}

template <Activation A>
int backward(const pipesched_stage_config *c, const float *params, int64_t rows,
             const float *input, const float *gradOutput, float *gradInput,
             float *gradParams, float *ws) {
  if (!gradInput && !gradParams)
    return 0;
  const int64_t H = c->hidden, L = c->layers, block = rows * H;
  run<A>(c, params, rows, input, nullptr, ws);
  float *gz = ws + (2 * L - 1) * block;
  float *ga = ws + 2 * L * block;
  const float *g = gradOutput;
  for (int64_t l = L - 1; l >= 0; --l) {
    const float *w = params + l * layerParams(c);
    const float *z = ws + l * block;
    const float *in = l == 0 ? input : ws + (L + l - 1) * block;
    activationBackward(A, z, g, gz, block);
    if (gradParams) {
      float *gw = gradParams + l * layerParams(c);
      linearBackwardWeight(in, gz, gw, gw + H * H, rows, H, H);
    }
    if (l > 0) {
      linearBackwardInput(gz, w, ga, rows, H, H);
      g = ga;
    } else if (gradInput) {
      linearBackwardInput(gz, w, gradInput, rows, H, H);
    }
  }
  return 0;
}

const pipesched_stage_api kGeluApi = {
    PIPESCHED_STAGE_ABI_VERSION, "built-in MLP",        numParams, workspaceFloats,
    init,                        forward<Activation::Gelu>, backward<Activation::Gelu>,
};
const pipesched_stage_api kReluApi = {
    PIPESCHED_STAGE_ABI_VERSION, "built-in MLP (ReLU)", numParams, workspaceFloats,
    init,                        forward<Activation::Relu>, backward<Activation::Relu>,
};

} // namespace

void activationForward(Activation activation, const float *z, float *a, int64_t n) {
  if (activation == Activation::Relu)
    reluForward(z, a, n);
  else
    geluForward(z, a, n);
}

void activationBackward(Activation activation, const float *z, const float *da, float *dz,
                        int64_t n) {
  if (activation == Activation::Relu)
    reluBackward(z, da, dz, n);
  else
    geluBackward(z, da, dz, n);
}

const pipesched_stage_api *builtinMlpApi(Activation activation) {
  return activation == Activation::Relu ? &kReluApi : &kGeluApi;
}

std::vector<ParamTensor> mlpParamLayout(const pipesched_stage_config &c) {
  const int64_t H = c.hidden;
  std::vector<ParamTensor> layout;
  for (int64_t l = 0; l < c.layers; ++l) {
    const int64_t w = l * layerParams(&c);
    layout.push_back({w, H * H, l, ParamTensor::Kind::Weight});
    layout.push_back({w + H * H, H, l, ParamTensor::Kind::Bias});
  }
  return layout;
}

} // namespace pipesched::runtime
