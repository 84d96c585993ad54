// The built-in MLP, behind the same C ABI as a model library (stage_abi.h).
#pragma once

#include "param_layout.h"
#include "pipesched/runtime/stage_abi.h"

#include <vector>

namespace pipesched::runtime {

const pipesched_stage_api *builtinMlpApi();

// The tensors of a stage's parameters: per layer, W then b.
std::vector<ParamTensor> mlpParamLayout(const pipesched_stage_config &c);

} // namespace pipesched::runtime
