/*
 * The pipesched stage ABI (plain C, version 1).
 *
 * pipeline-run computes every stage through this interface: the built-in
 * MLP implements it, and `pipeline-run --model-lib path.so` loads another
 * implementation with dlopen. The runtime owns all memory; a library only
 * computes on the buffers it is handed, so parameters, gradients and
 * activations can be sent, reduced and checked by the runtime.
 *
 * A library exports one symbol:
 *
 *   const pipesched_stage_api *pipesched_stage_get_api(uint32_t abi_version);
 *
 * which returns its function table, or NULL when it does not implement
 * `abi_version` (the runtime passes PIPESCHED_STAGE_ABI_VERSION).
 *
 * Shapes. Every tensor at a stage boundary (a stage's input and output, and
 * their gradients) is `rows x hidden` float32, row-major, with `rows` the
 * microbatch size and `hidden` from the config; one row is one sample. A
 * stage's parameters are one flat float32 array of num_params(cfg) values,
 * in an order the library chooses (the runtime only copies, sums and
 * updates them element-wise).
 *
 * Rules:
 *  - Functions are pure: results depend only on the arguments (no global
 *    state), so any rank, in any order, computes the same values, and a
 *    backward can run on another rank than its forward. They may be called
 *    concurrently on different buffers.
 *  - backward recomputes whatever internals it needs from `input`: the
 *    runtime keeps only stage inputs between a forward and its backward.
 *  - Weight gradients are ACCUMULATED (+=) into `grad_params`: the runtime
 *    zeroes the buffer at the start of a step and sums microbatches in it.
 *  - Return 0 on success, any other value on failure (the runtime stops the
 *    job and reports the function and the value).
 *
 * The built-in MLP (and runtime/examples/mlp_plugin.c): a stage is `layers`
 * x (Linear(hidden, hidden) with bias, then GELU with the tanh
 * approximation). Parameters, per layer l in order: W_l (hidden x hidden,
 * row-major [out][in], y = x W_l^T + b_l), then b_l (hidden). W_l[o][i] =
 * pipesched_rng_uniform(pipesched_rng_key(seed, PIPESCHED_RNG_WEIGHTS,
 * stage, l), o * hidden + i) * (1 / sqrtf(hidden)); biases start at zero
 * (rng.h).
 */
#ifndef PIPESCHED_RUNTIME_STAGE_ABI_H
#define PIPESCHED_RUNTIME_STAGE_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PIPESCHED_STAGE_ABI_VERSION 1u
#define PIPESCHED_STAGE_API_SYMBOL "pipesched_stage_get_api"

/* What the runtime tells a library about the stage it computes. */
typedef struct pipesched_stage_config {
  uint32_t abi_version; /* PIPESCHED_STAGE_ABI_VERSION */
  int32_t stage;        /* this stage, in [0, num_stages) */
  int32_t num_stages;   /* stages of the program (of its stage graph) */
  int64_t hidden;       /* width of every boundary tensor (--hidden) */
  int64_t layers;       /* --layers-per-stage */
  uint64_t seed;        /* --seed: for init() */
} pipesched_stage_config;

typedef struct pipesched_stage_api {
  uint32_t abi_version; /* PIPESCHED_STAGE_ABI_VERSION */
  const char *name;     /* for messages */

  /* Number of float32 parameters of the stage. */
  int64_t (*num_params)(const pipesched_stage_config *cfg);

  /* Floats of scratch memory forward/backward need for `rows` rows. */
  int64_t (*workspace_floats)(const pipesched_stage_config *cfg, int64_t rows);

  /* Writes the initial parameters: params[num_params]. Deterministic in
   * (cfg->seed, cfg->stage), so every owner of a stage starts identical. */
  int (*init)(const pipesched_stage_config *cfg, float *params);

  /* output[rows x hidden] = F(params, input[rows x hidden]).
   * workspace[workspace_floats(cfg, rows)]. */
  int (*forward)(const pipesched_stage_config *cfg, const float *params,
                 int64_t rows, const float *input, float *output,
                 float *workspace);

  /* Given input[rows x hidden] and grad_output[rows x hidden] (dLoss/dOutput):
   *  - if grad_input != NULL, writes grad_input[rows x hidden] = dLoss/dInput;
   *  - if grad_params != NULL, ACCUMULATES dLoss/dParams into
   *    grad_params[num_params].
   * Either may be NULL (a split backward asks for one at a time; both NULL
   * is allowed and does nothing). workspace as for forward. */
  int (*backward)(const pipesched_stage_config *cfg, const float *params,
                  int64_t rows, const float *input, const float *grad_output,
                  float *grad_input, float *grad_params, float *workspace);
} pipesched_stage_api;

typedef const pipesched_stage_api *(*pipesched_stage_get_api_fn)(
    uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* PIPESCHED_RUNTIME_STAGE_ABI_H */
