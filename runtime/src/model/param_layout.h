// How a stage's parameter vector splits into tensors: --verify judges each
// tensor on its own (verify_metric.h), so that a small tensor (a bias) is
// not measured against a large one's scale, nor a large one's error diluted
// by the whole stage.
#pragma once

#include <cstdint>
#include <string>

namespace pipesched::runtime {

struct ParamTensor {
  // Whole: the stage's entire parameter vector (a model library, whose
  // layout the runtime does not know).
  enum class Kind { Weight, Bias, Whole };
  int64_t offset = 0, size = 0; // in floats, into the stage's parameters
  int64_t layer = -1;           // -1 for Whole
  Kind kind = Kind::Whole;
};

// "layer 0 weight", "layer 1 bias", "all parameters (layout unknown)".
inline std::string describe(const ParamTensor &t) {
  switch (t.kind) {
  case ParamTensor::Kind::Weight:
    return "layer " + std::to_string(t.layer) + " weight";
  case ParamTensor::Kind::Bias:
    return "layer " + std::to_string(t.layer) + " bias";
  case ParamTensor::Kind::Whole:
    break;
  }
  return "all parameters (layout unknown)";
}

} // namespace pipesched::runtime
