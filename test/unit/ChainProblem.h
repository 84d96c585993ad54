//===- ChainProblem.h - search problems of a chain of stages ----*- C++ -*-===//

#ifndef PIPESCHED_TEST_UNIT_CHAINPROBLEM_H
#define PIPESCHED_TEST_UNIT_CHAINPROBLEM_H

#include "pipesched/Scheduling/Search.h"

namespace pipesched::scheduling::test {

/// A chain of S stages with the same durations on every stage (a split
/// backward when w >= 0).
inline SearchProblem chain(int64_t S, int64_t B, int64_t W, int64_t f,
                           int64_t b, int64_t w = -1) {
  SearchProblem p;
  p.stages = S;
  p.microbatches = B;
  p.workers = W;
  p.forward.assign(size_t(S), f);
  p.backward.assign(size_t(S), b);
  if (w >= 0)
    p.weight.assign(size_t(S), w);
  for (int64_t s = 0; s < S; ++s)
    p.stagePreds.push_back(s ? std::vector<int64_t>{s - 1}
                             : std::vector<int64_t>{});
  return p;
}

} // namespace pipesched::scheduling::test

#endif // PIPESCHED_TEST_UNIT_CHAINPROBLEM_H
