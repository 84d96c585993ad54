// The built-in MLP, behind the same C ABI as a model library (stage_abi.h).
#pragma once

#include "pipesched/runtime/stage_abi.h"

namespace pipesched::runtime {

const pipesched_stage_api *builtinMlpApi();

} // namespace pipesched::runtime
