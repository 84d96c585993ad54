/*
 * Test-only model libraries: the example MLP (runtime/examples/mlp_plugin.c,
 * compiled in here under another export name) with one fault on one rank,
 * chosen at build time:
 *
 *   -DFAULT_NAN:   rank 1's forwards write a NaN into their output (as
 *                  ../shared/bad-inputs/nan_plugin.c): --verify must fail.
 *   -DFAULT_STALL: rank 1's first forward sleeps 30 s: the other ranks'
 *                  waits must end at --timeout with a message.
 *   -DFAULT_ERROR: rank 1's second forward returns 7 (an error mid-step):
 *                  the job must end at once, naming the rank and the op.
 *   -DFAULT_LOAD_STALL: rank 1 takes 30 s to load the library (as a hung
 *                  file system would): the others' wait for the ranks to
 *                  load must end at --timeout with a message.
 *
 * The rank comes from the launcher's environment (Open MPI, MPICH, PMIx).
 */
#define _POSIX_C_SOURCE 199309L
#define pipesched_stage_get_api mlp_stage_get_api
#include "../../examples/mlp_plugin.c"
#undef pipesched_stage_get_api

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int on_faulty_rank(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
    const char *r = getenv(vars[i]);
    if (r)
      return strcmp(r, "1") == 0;
  }
  return 0;
}

static int faulty_forward(const pipesched_stage_config *c, const float *params,
                          int64_t rows, const float *input, float *output,
                          float *ws) {
  int rc = forward(c, params, rows, input, output, ws);
  if (!on_faulty_rank())
    return rc;
#if defined(FAULT_NAN)
  output[0] = NAN;
#elif defined(FAULT_STALL)
  static int stalled = 0;
  if (!stalled) {
    struct timespec t = {30, 0};
    stalled = 1;
    nanosleep(&t, NULL);
  }
#elif defined(FAULT_ERROR)
  static int forwards = 0;
  if (++forwards == 2)
    return 7;
#endif
  return rc;
}

static pipesched_stage_api faulty;

__attribute__((visibility("default"))) const pipesched_stage_api *
pipesched_stage_get_api(uint32_t abi_version) {
#if defined(FAULT_LOAD_STALL)
  if (on_faulty_rank()) {
    struct timespec t = {30, 0};
    nanosleep(&t, NULL);
  }
#endif
  const pipesched_stage_api *mlp = mlp_stage_get_api(abi_version);
  if (!mlp)
    return NULL;
  faulty = *mlp;
  faulty.name = "faulty MLP plugin (tests)";
  faulty.forward = faulty_forward;
  return &faulty;
}
