//===- SchedDialect.cpp - the sched dialect -------------------------------===//

#include "pipesched/Dialect/Sched/SchedDialect.h"
#include "pipesched/Dialect/Sched/SchedOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace pipesched::sched;

#include "pipesched/Dialect/Sched/SchedDialect.cpp.inc"
#include "pipesched/Dialect/Sched/SchedEnums.cpp.inc"
#include "pipesched/Dialect/Sched/SchedInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "pipesched/Dialect/Sched/SchedTypes.cpp.inc"

void SchedDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "pipesched/Dialect/Sched/SchedTypes.cpp.inc"
      >();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "pipesched/Dialect/Sched/SchedOps.cpp.inc"
      >();
}
