//===- SchedDialect.h - the sched dialect -----------------------*- C++ -*-===//
//
// The dialect, its types, enums, attributes and the job op interface.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_DIALECT_SCHED_SCHEDDIALECT_H
#define PIPESCHED_DIALECT_SCHED_SCHEDDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Types.h"

#include "pipesched/Dialect/Sched/SchedDialect.h.inc"
#include "pipesched/Dialect/Sched/SchedEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "pipesched/Dialect/Sched/SchedTypes.h.inc"

#include "mlir/IR/AffineMap.h"
#include "pipesched/Dialect/Sched/SchedAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "pipesched/Dialect/Sched/SchedAttrs.h.inc"

#include "pipesched/Dialect/Sched/SchedInterfaces.h.inc"

#endif // PIPESCHED_DIALECT_SCHED_SCHEDDIALECT_H
