#include "env_default.h"

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

} // namespace pipesched::runtime::cuda
