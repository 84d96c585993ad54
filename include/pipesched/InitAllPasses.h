//===- InitAllPasses.h - every pipesched pass and pipeline ------*- C++ -*-===//

#ifndef PIPESCHED_INITALLPASSES_H
#define PIPESCHED_INITALLPASSES_H

#include "pipesched/Transforms/Passes.h"

namespace pipesched {
inline void registerAllPasses() { registerPipeschedPasses(); }
} // namespace pipesched

#endif // PIPESCHED_INITALLPASSES_H
