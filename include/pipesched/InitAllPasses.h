//===- InitAllPasses.h - every pipesched pass and pipeline ------*- C++ -*-===//

#ifndef PIPESCHED_INITALLPASSES_H
#define PIPESCHED_INITALLPASSES_H

#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/Pipelines.h"

namespace pipesched {
inline void registerAllPasses() {
  registerPipeschedPasses();
  registerPipelines();
}
} // namespace pipesched

#endif // PIPESCHED_INITALLPASSES_H
