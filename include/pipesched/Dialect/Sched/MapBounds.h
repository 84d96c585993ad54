//===- MapBounds.h - 64-bit safety of placement and priority maps -*- C++ -*-===//
//
// Placement and priority maps are evaluated with 64-bit arithmetic, one job
// at a time. Two things can make that silently wrong, and both are checked
// here, by interval arithmetic in 128 bits:
// - MLIR folds the constants of an affine map as it parses it, with 64-bit
//   wrap-around: `s * 4611686018427387904 * 4` becomes `0`. The map as
//   written (its text) is bounded with every dimension in [0, 1]: past 64
//   bits there, some folded constant wrapped.
// - A map that is exact can still overflow on the step's own domain
//   (`s * 4611686018427387904` at s = 2). The parsed map is bounded over
//   that domain.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_DIALECT_SCHED_MAPBOUNDS_H
#define PIPESCHED_DIALECT_SCHED_MAPBOUNDS_H

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace pipesched::sched {

/// The closed range [lo, hi] of the values an expression can take.
struct IntRange {
  int64_t lo, hi;
};

/// The range of `expr` when dimension i ranges over dims[i]; none if some
/// step of its evaluation (not only the result) can leave 64 bits.
/// Divisors must be positive constants (verified before).
std::optional<IntRange> boundAffineExpr(mlir::AffineExpr expr,
                                          llvm::ArrayRef<IntRange> dims);

/// Checks the text of an affine map literal, `affine_map<(d...) -> (e...)>`,
/// before MLIR folds its constants: an error message naming the result
/// whose constants overflow 64 bits with its dimensions in [0, 1], or none.
/// Text that is not such a literal (an alias) is not checked here.
std::optional<std::string> checkMapLiteral(llvm::StringRef text);

} // namespace pipesched::sched

#endif // PIPESCHED_DIALECT_SCHED_MAPBOUNDS_H
