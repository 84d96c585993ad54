//===- OrderText.h - worker orders as text for the unit tests ---*- C++ -*-===//

#ifndef PIPESCHED_TEST_UNIT_ORDERTEXT_H
#define PIPESCHED_TEST_UNIT_ORDERTEXT_H

#include "pipesched/Scheduling/Priorities.h"

#include <string>
#include <vector>

namespace pipesched::scheduling {

/// A worker's order as the Zero Bubble repository prints it:
/// `{stage}{F|B|W}{microbatch}` separated by spaces (B = input half).
inline std::string renderOrder(const std::vector<JobCoord> &jobs) {
  std::string out;
  for (const JobCoord &j : jobs) {
    if (!out.empty())
      out += ' ';
    out += std::to_string(j.stage);
    out += j.direction == Direction::Forward    ? 'F'
           : j.direction == Direction::Backward ? 'B'
                                                : 'W';
    out += std::to_string(j.microbatch);
  }
  return out;
}

} // namespace pipesched::scheduling

#endif // PIPESCHED_TEST_UNIT_ORDERTEXT_H
