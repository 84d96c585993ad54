//===- Direction.h - the direction of a job ---------------------*- C++ -*-===//

#ifndef PIPESCHED_SCHEDULING_DIRECTION_H
#define PIPESCHED_SCHEDULING_DIRECTION_H

#include <cstdint>

namespace pipesched::scheduling {

/// `d` of a job (s, b, d): forward, backward (input gradient, or the whole
/// backward when it is not split), the weight-gradient half, or a job of a
/// backward computed as a parallel scan (BPPSA: the loss gradient, a
/// stage's Jacobian, a product of the scan).
enum class Direction : uint8_t { Forward, Backward, BackwardWeight, Scan };

} // namespace pipesched::scheduling

#endif // PIPESCHED_SCHEDULING_DIRECTION_H
