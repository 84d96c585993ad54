//===- Direction.h - the direction of a job ---------------------*- C++ -*-===//

#ifndef PIPESCHED_SCHEDULING_DIRECTION_H
#define PIPESCHED_SCHEDULING_DIRECTION_H

#include <cstdint>

namespace pipesched::scheduling {

/// `d` of a job (s, b, d): forward, backward (input gradient, or the whole
/// backward when it is not split), or the weight-gradient half.
enum class Direction : uint8_t { Forward, Backward, BackwardWeight };

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_DIRECTION_H
