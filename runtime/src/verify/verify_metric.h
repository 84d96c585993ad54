// --verify's measures of how far a run's weights and losses are from the
// reference's (docs/runtime.md, Verification). MPI-free, unit-tested.
//
// Judged: per parameter tensor (param_layout.h) the normwise relative error
// ||got - want||_2 / ||want||_2, accumulated in double. Rounding in a
// different order (other summation orders, FMA: the cuda backend) moves each
// element by a few ulps of the magnitudes that were summed, which for an
// element near zero is huge relative to the element itself; relative to the
// tensor's norm it stays at ulp level. Also reported, not judged: the
// element-wise maximum of |got - want| / (|want| + 1e-6).
#pragma once

#include "model/param_layout.h"

#include <cstddef>
#include <vector>

namespace pipesched::runtime {

// A maximum that keeps NaN: once `max` is NaN it stays NaN (a comparison
// with NaN is false both ways, so std::max, or a plain `err > max`, would
// drop it or let a later finite error replace it). Returns whether `err`
// became the maximum.
bool keepWorse(double err, double &max);

// |got - want| / |want|; |got - want| (the absolute error) when want == 0.
// NaN or infinite when either is.
double relativeError(double got, double want);

// ||got - want||_2 / ||want||_2 over n floats, summed in double;
// ||got - want||_2 when want is all zeros. NaN or infinite when an element
// of either is.
double normwiseRelativeError(const float *got, const float *want, size_t n);

// |got - want| / (|want| + 1e-6): the element-wise measure (information).
double elementwiseRelativeError(double got, double want);

struct WeightComparison {
  size_t tensors = 0, params = 0;
  // The largest normwise relative error over all tensors (NaN if one is
  // NaN), and where: the stage (-1 when every tensor equals the
  // reference's) and the tensor.
  double normwise = 0;
  int worstStage = -1;
  ParamTensor worst;
  double elementwise = 0; // the largest over all parameters
  size_t bitwise = 0;     // parameters bitwise equal to the reference's
  // Parameters that are NaN or infinite in the run or the reference, and
  // the first of them.
  size_t nonFinite = 0;
  int firstNonFiniteStage = -1;
  size_t firstNonFiniteIndex = 0;

  bool passes(double tolerance) const { return nonFinite == 0 && normwise <= tolerance; }
};

// got[s] and want[s]: stage s's parameters, laid out as layouts[s], whose
// tensors must tile them in order (throws std::logic_error otherwise).
WeightComparison compareWeights(const std::vector<std::vector<float>> &got,
                                const std::vector<std::vector<float>> &want,
                                const std::vector<std::vector<ParamTensor>> &layouts);

} // namespace pipesched::runtime
