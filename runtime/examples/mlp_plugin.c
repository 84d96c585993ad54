/*
 * An example model library for `pipeline-run --model-lib`: the built-in MLP
 * (Linear(H, H) + GELU tanh, `layers` times per stage) written again in C
 * against the stage ABI alone. Every loop sums in the same order as the
 * runtime's kernels (runtime/src/model/kernels.cpp), so training with this library
 * yields bitwise the same weights as the built-in model.
 *
 * Build: cc -O2 -ffp-contract=off -shared -fPIC -I runtime/include \
 *          runtime/examples/mlp_plugin.c -o libmlp_plugin.so -lm
 */
#include "pipesched/runtime/rng.h"
#include "pipesched/runtime/stage_abi.h"

#include <math.h>
#include <stddef.h>

#define SQRT_2_OVER_PI 0.7978845608028654f
#define GELU_CUBIC 0.044715f

/* Per layer: W (H x H, [out][in]) then b (H). */
static int64_t layer_params(const pipesched_stage_config *c) {
  return c->hidden * c->hidden + c->hidden;
}

static int64_t num_params(const pipesched_stage_config *c) {
  return c->layers * layer_params(c);
}

/* Blocks of rows x H: Z_0..Z_{L-1}, A_1..A_{L-1}, two gradient blocks. */
static int64_t workspace_floats(const pipesched_stage_config *c, int64_t rows) {
  return (2 * c->layers + 1) * rows * c->hidden;
}

static int init(const pipesched_stage_config *c, float *params) {
  const int64_t H = c->hidden;
  const float scale = 1.0f / sqrtf((float)H);
  for (int64_t l = 0; l < c->layers; ++l) {
    float *w = params + l * layer_params(c);
    uint64_t key = pipesched_rng_key(c->seed, PIPESCHED_RNG_WEIGHTS,
                                     (uint64_t)c->stage, (uint64_t)l);
    for (int64_t k = 0; k < H * H; ++k)
      w[k] = pipesched_rng_uniform(key, (uint64_t)k) * scale;
    for (int64_t k = 0; k < H; ++k)
      w[H * H + k] = 0.0f;
  }
  return 0;
}

static void linear(const float *x, const float *w, const float *b, float *y,
                   int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < n; ++o) {
      float acc = 0.0f;
      for (int64_t i = 0; i < n; ++i)
        acc += x[r * n + i] * w[o * n + i];
      y[r * n + o] = acc + b[o];
    }
}

static void gelu(const float *z, float *a, int64_t count) {
  for (int64_t k = 0; k < count; ++k) {
    const float x = z[k];
    const float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    a[k] = 0.5f * x * (1.0f + tanhf(u));
  }
}

static void gelu_backward(const float *z, const float *da, float *dz, int64_t count) {
  for (int64_t k = 0; k < count; ++k) {
    const float x = z[k];
    const float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    const float t = tanhf(u);
    const float du = SQRT_2_OVER_PI * (1.0f + 3.0f * GELU_CUBIC * x * x);
    dz[k] = da[k] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
  }
}

/* dx[r][i] = sum over o (ascending) of dz[r][o] * w[o][i]. */
static void linear_backward_input(const float *dz, const float *w, float *dx,
                                  int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i)
      dx[r * n + i] = 0.0f;
    for (int64_t o = 0; o < n; ++o)
      for (int64_t i = 0; i < n; ++i)
        dx[r * n + i] += dz[r * n + o] * w[o * n + i];
  }
}

/* dw[o][i] += dz[r][o] * x[r][i]; db[o] += dz[r][o]; rows ascending. */
static void linear_backward_weight(const float *x, const float *dz, float *dw,
                                   float *db, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < n; ++o) {
      const float d = dz[r * n + o];
      for (int64_t i = 0; i < n; ++i)
        dw[o * n + i] += d * x[r * n + i];
      db[o] += d;
    }
}

/* The layers, keeping Z_l and A_l in the workspace; output may be NULL. */
static void run(const pipesched_stage_config *c, const float *params, int64_t rows,
                const float *input, float *output, float *ws) {
  const int64_t H = c->hidden, L = c->layers, block = rows * H;
  const float *a = input;
  for (int64_t l = 0; l < L; ++l) {
    const float *w = params + l * layer_params(c);
    float *z = ws + l * block;
    float *next = l + 1 == L ? output : ws + (L + l) * block;
    linear(a, w, w + H * H, z, rows, H);
    if (next)
      gelu(z, next, block);
    a = next;
  }
}

static int forward(const pipesched_stage_config *c, const float *params,
                   int64_t rows, const float *input, float *output, float *ws) {
  if (!output)
    return 1;
  run(c, params, rows, input, output, ws);
  return 0;
}

static int backward(const pipesched_stage_config *c, const float *params,
                    int64_t rows, const float *input, const float *grad_output,
                    float *grad_input, float *grad_params, float *ws) {
  const int64_t H = c->hidden, L = c->layers, block = rows * H;
  float *gz, *ga;
  const float *g = grad_output;
  if (!grad_input && !grad_params)
    return 0;
  run(c, params, rows, input, NULL, ws);
  gz = ws + (2 * L - 1) * block;
  ga = ws + 2 * L * block;
  for (int64_t l = L - 1; l >= 0; --l) {
    const float *w = params + l * layer_params(c);
    const float *in = l == 0 ? input : ws + (L + l - 1) * block;
    gelu_backward(ws + l * block, g, gz, block);
    if (grad_params) {
      float *gw = grad_params + l * layer_params(c);
      linear_backward_weight(in, gz, gw, gw + H * H, rows, H);
    }
    if (l > 0) {
      linear_backward_input(gz, w, ga, rows, H);
      g = ga;
    } else if (grad_input) {
      linear_backward_input(gz, w, grad_input, rows, H);
    }
  }
  return 0;
}

static const pipesched_stage_api api = {
    PIPESCHED_STAGE_ABI_VERSION, "example MLP plugin", num_params,
    workspace_floats, init, forward, backward,
};

__attribute__((visibility("default"))) const pipesched_stage_api *
pipesched_stage_get_api(uint32_t abi_version) {
  return abi_version == PIPESCHED_STAGE_ABI_VERSION ? &api : NULL;
}
