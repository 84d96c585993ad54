//===- InitAllDialects.h - every dialect pipesched uses ---------*- C++ -*-===//

#ifndef PIPESCHED_INITALLDIALECTS_H
#define PIPESCHED_INITALLDIALECTS_H

#include "mlir/IR/DialectRegistry.h"
#include "pipesched/Dialect/Sched/SchedDialect.h"

namespace pipesched {
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<sched::SchedDialect>();
}
} // namespace pipesched

#endif // PIPESCHED_INITALLDIALECTS_H
