// The built-in MLP, behind the same C ABI as a model library (stage_abi.h).
#pragma once

#include "model/param_layout.h"
#include "pipesched/runtime/stage_abi.h"

#include <cstdint>
#include <vector>

namespace pipesched::runtime {

// The activation after each Linear of the built-in MLP (--activation).
enum class Activation : uint8_t { Gelu, Relu };

const pipesched_stage_api *builtinMlpApi(Activation activation = Activation::Gelu);

// The activation's function and derivative, as the built-in MLP applies
// them: a = f(z); dz = da * f'(z).
void activationForward(Activation activation, const float *z, float *a, int64_t n);
void activationBackward(Activation activation, const float *z, const float *da, float *dz,
                        int64_t n);

// The tensors of a stage's parameters: per layer, W then b.
std::vector<ParamTensor> mlpParamLayout(const pipesched_stage_config &c);

} // namespace pipesched::runtime
