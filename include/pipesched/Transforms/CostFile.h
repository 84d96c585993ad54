//===- CostFile.h - the costs measured on a machine, read from JSON -*- C++ -*-===//
//
// The cost file `pipeline-run --profile` writes (its fields are named in
// pipesched/Program/Costs.h; docs/calibration.md), read into the
// dialect-free scheduling::MeasuredCosts for --sched-calibrate.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_COSTFILE_H
#define PIPESCHED_TRANSFORMS_COSTFILE_H

#include "pipesched/Scheduling/Calibration.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace pipesched {

/// The largest cost file read: lists of a few numbers per stage fit
/// millions of stages.
inline constexpr uint64_t kMaxCostFileBytes = uint64_t(64) << 20;

/// Reads and checks the cost file at `path` ("-": stdin). Returns "" and
/// fills `out`, or the first problem: the file cannot be read, has more
/// than kMaxCostFileBytes bytes or nests too deep (both found before
/// parsing), is not JSON (with line and column), a field is missing,
/// unknown or mistyped, or a measurement is not a duration
/// (MeasuredCosts::check). The message does not name the file; callers
/// prefix it.
std::string readCostFile(llvm::StringRef path, scheduling::MeasuredCosts &out);

/// The same for a document already in memory.
std::string parseCostFile(llvm::StringRef text, scheduling::MeasuredCosts &out);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_COSTFILE_H
