#include "verify/verify_metric.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pipesched::runtime {
namespace {

// diff / ref, or diff alone against a zero reference. A NaN reference
// makes diff NaN too, so it needs no case of its own.
double relative(double diff, double ref) { return ref > 0 ? diff / ref : diff; }

} // namespace

bool keepWorse(double err, double &max) {
  if (std::isnan(max) || err <= max)
    return false;
  max = err;
  return true;
}

double relativeError(double got, double want) {
  return relative(std::fabs(got - want), std::fabs(want));
}

double normwiseRelativeError(const float *got, const float *want, size_t n) {
  // Squares of floats stay far below double's range (at most ~1e77 each).
  double diff2 = 0, want2 = 0;
  for (size_t k = 0; k < n; ++k) {
    const double d = double(got[k]) - double(want[k]);
    diff2 += d * d;
    want2 += double(want[k]) * double(want[k]);
  }
  return relative(std::sqrt(diff2), std::sqrt(want2));
}

double elementwiseRelativeError(double got, double want) {
  return std::fabs(got - want) / (std::fabs(want) + 1e-6);
}

WeightComparison compareWeights(const std::vector<std::vector<float>> &got,
                                const std::vector<std::vector<float>> &want,
                                const std::vector<std::vector<ParamTensor>> &layouts) {
  if (got.size() != want.size() || got.size() != layouts.size())
    throw std::logic_error("compareWeights: stage counts differ");
  WeightComparison c;
  for (size_t s = 0; s < got.size(); ++s) {
    const std::vector<float> &g = got[s], &w = want[s];
    if (g.size() != w.size())
      throw std::logic_error("compareWeights: stage " + std::to_string(s) +
                             ": parameter counts differ");
    int64_t end = 0;
    for (const ParamTensor &t : layouts[s]) {
      if (t.offset != end || t.size < 0 || size_t(t.offset + t.size) > g.size())
        throw std::logic_error("compareWeights: stage " + std::to_string(s) +
                               ": the layout does not tile the parameters");
      end = t.offset + t.size;
      if (keepWorse(normwiseRelativeError(&g[size_t(t.offset)], &w[size_t(t.offset)],
                                          size_t(t.size)),
                    c.normwise)) {
        c.worstStage = int(s);
        c.worst = t;
      }
      ++c.tensors;
    }
    if (size_t(end) != g.size())
      throw std::logic_error("compareWeights: stage " + std::to_string(s) +
                             ": the layout does not tile the parameters");
    for (size_t k = 0; k < g.size(); ++k) {
      if (!std::isfinite(g[k]) || !std::isfinite(w[k])) {
        if (c.nonFinite++ == 0) {
          c.firstNonFiniteStage = int(s);
          c.firstNonFiniteIndex = k;
        }
      }
      keepWorse(elementwiseRelativeError(g[k], w[k]), c.elementwise);
      c.bitwise += std::memcmp(&g[k], &w[k], sizeof(float)) == 0;
    }
    c.params += g.size();
  }
  return c;
}

} // namespace pipesched::runtime
