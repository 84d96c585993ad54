//===- Saturating.h - int64 arithmetic that saturates -------------*- C++ -*-===//
//
// Byte and activation counts of huge `act` or `weights` costs saturate at
// INT64_MAX (INT64_MIN below) instead of overflowing: the simulator, the
// live-memory accounting and the traffic accounting add alike, so their
// figures agree even when saturated.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SCHEDULING_SATURATING_H
#define PIPESCHED_SCHEDULING_SATURATING_H

#include <cstdint>
#include <limits>

namespace pipesched::scheduling {

inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  return sum;
}

inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return (a > 0) == (b > 0) ? std::numeric_limits<int64_t>::max()
                              : std::numeric_limits<int64_t>::min();
  return product;
}

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_SATURATING_H
