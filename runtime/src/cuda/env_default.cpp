#include "cuda/env_default.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace pipesched::runtime::cuda {

bool setEnvDefault(const char *name, const char *value) {
  if (const char *set = std::getenv(name); set && *set)
    return false;
  return setenv(name, value, /*overwrite=*/1) == 0;
}

bool requestEagerModuleLoading() { return setEnvDefault("CUDA_MODULE_LOADING", "EAGER"); }

bool eagerModuleLoadingMatters(bool cudaBackend, bool nccl, int worldSize) {
  return cudaBackend && nccl && worldSize >= 2;
}

namespace {

// A positive int, the whole string; else 0.
int positive(const char *text) {
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  return errno == 0 && *end == '\0' && v > 0 && v <= INT_MAX ? int(v) : 0;
}

} // namespace

int launcherWorldSize(const GetEnv &getenv) {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const int size = positive(getenv(name)))
      return size;
  return 1;
}

} // namespace pipesched::runtime::cuda
