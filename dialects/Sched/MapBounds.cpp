//===- MapBounds.cpp - 64-bit safety of placement and priority maps -------===//

#include "pipesched/Dialect/Sched/MapBounds.h"

#include "mlir/IR/AffineExprVisitor.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace pipesched::sched;

namespace {
using Wide = __int128;

/// An interval in 128 bits; `ok` turns false once a bound leaves 64 bits.
struct Interval {
  Wide lo = 0, hi = 0;
  bool ok = true;
};

bool fits(Wide v) {
  return v >= std::numeric_limits<int64_t>::min() &&
         v <= std::numeric_limits<int64_t>::max();
}

Interval checked(Wide lo, Wide hi, bool ok) {
  return {lo, hi, ok && fits(lo) && fits(hi)};
}

Interval add(Interval a, Interval b) {
  return checked(a.lo + b.lo, a.hi + b.hi, a.ok && b.ok);
}
Interval sub(Interval a, Interval b) {
  return checked(a.lo - b.hi, a.hi - b.lo, a.ok && b.ok);
}
Interval mul(Interval a, Interval b) {
  // Both operands fit 64 bits (else not ok), so each product fits 128.
  if (!a.ok || !b.ok)
    return {0, 0, false};
  Wide p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return checked(*std::min_element(p, p + 4), *std::max_element(p, p + 4),
                 true);
}
Wide floorDiv(Wide n, Wide d) {
  Wide q = n / d;
  return (n % d != 0 && ((n < 0) != (d < 0))) ? q - 1 : q;
}
Wide ceilDiv(Wide n, Wide d) { return -floorDiv(-n, d); }

enum class DivKind { Floor, Ceil, Mod };

/// Division by a positive constant; anything else is left to the map's
/// verifier (it is refused there) and bounds nothing here.
Interval divide(Interval a, Interval b, DivKind kind) {
  if (!a.ok || !b.ok || b.lo != b.hi || b.lo <= 0)
    return {0, 0, a.ok && b.ok};
  Wide c = b.lo;
  switch (kind) {
  case DivKind::Floor:
    return {floorDiv(a.lo, c), floorDiv(a.hi, c), true};
  case DivKind::Ceil:
    return {ceilDiv(a.lo, c), ceilDiv(a.hi, c), true};
  case DivKind::Mod:
    return {0, c - 1, true};
  }
  return {0, 0, false};
}

struct Bounder : AffineExprVisitor<Bounder, Interval> {
  ArrayRef<IntRange> dims;
  Interval visitAddExpr(AffineBinaryOpExpr e) {
    return add(visit(e.getLHS()), visit(e.getRHS()));
  }
  Interval visitMulExpr(AffineBinaryOpExpr e) {
    return mul(visit(e.getLHS()), visit(e.getRHS()));
  }
  Interval visitModExpr(AffineBinaryOpExpr e) {
    return divide(visit(e.getLHS()), visit(e.getRHS()), DivKind::Mod);
  }
  Interval visitFloorDivExpr(AffineBinaryOpExpr e) {
    return divide(visit(e.getLHS()), visit(e.getRHS()), DivKind::Floor);
  }
  Interval visitCeilDivExpr(AffineBinaryOpExpr e) {
    return divide(visit(e.getLHS()), visit(e.getRHS()), DivKind::Ceil);
  }
  Interval visitConstantExpr(AffineConstantExpr e) {
    return {e.getValue(), e.getValue(), true};
  }
  Interval visitDimExpr(AffineDimExpr e) {
    if (e.getPosition() >= dims.size())
      return {0, 0, false};
    IntRange r = dims[e.getPosition()];
    return {r.lo, r.hi, true};
  }
  Interval visitSymbolExpr(AffineSymbolExpr) { return {0, 0, true}; }
};
} // namespace

std::optional<IntRange>
pipesched::sched::boundAffineExpr(AffineExpr expr, ArrayRef<IntRange> dims) {
  Bounder bounder;
  bounder.dims = dims;
  Interval r = bounder.visit(expr);
  if (!r.ok)
    return std::nullopt;
  return IntRange{int64_t(r.lo), int64_t(r.hi)};
}

//===----------------------------------------------------------------------===//
// The literal, before MLIR folds it
//===----------------------------------------------------------------------===//

namespace {
/// Recursive descent over the affine expression grammar (MLIR's: `*`,
/// `floordiv`, `ceildiv`, `mod` bind tighter than `+` and `-`), computing
/// each subexpression's interval with every identifier in [0, 1].
/// Malformed text stops the check quietly: MLIR's parser reports it.
class LiteralBounder {
public:
  explicit LiteralBounder(StringRef text) : rest(text) {}

  /// Each result's interval, or none where the text is not a literal.
  std::optional<SmallVector<Interval>> results() {
    if (!consume("affine_map") || !consume("<") || !skipList('(', ')'))
      return std::nullopt;
    if (peek('[') && !skipList('[', ']'))
      return std::nullopt;
    if (!consume("->") || !consume("("))
      return std::nullopt;
    SmallVector<Interval> out;
    while (!peek(')')) {
      std::optional<Interval> e = expr();
      if (!e)
        return std::nullopt;
      out.push_back(*e);
      if (!consume(","))
        break;
    }
    return out;
  }

private:
  void skipSpace() { rest = rest.ltrim(); }
  bool peek(char c) {
    skipSpace();
    return rest.starts_with(StringRef(&c, 1));
  }
  bool consume(StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }
  /// A keyword operator, not the prefix of an identifier (`modulo`).
  bool consumeWord(StringRef word) {
    skipSpace();
    if (!rest.starts_with(word) ||
        (rest.size() > word.size() &&
         (llvm::isAlnum(rest[word.size()]) || rest[word.size()] == '_')))
      return false;
    rest = rest.drop_front(word.size());
    return true;
  }
  bool skipList(char open, char close) {
    if (!consume(StringRef(&open, 1)))
      return false;
    size_t end = rest.find(close);
    if (end == StringRef::npos)
      return false;
    rest = rest.drop_front(end + 1);
    return true;
  }

  std::optional<Interval> expr() {
    std::optional<Interval> lhs = term();
    while (lhs) {
      if (consume("+")) {
        std::optional<Interval> rhs = term();
        lhs = rhs ? std::optional(add(*lhs, *rhs)) : std::nullopt;
      } else if (!peek('-') || rest.starts_with("->")) {
        return lhs;
      } else {
        consume("-");
        std::optional<Interval> rhs = term();
        lhs = rhs ? std::optional(sub(*lhs, *rhs)) : std::nullopt;
      }
    }
    return lhs;
  }

  std::optional<Interval> term() {
    std::optional<Interval> lhs = unary();
    while (lhs) {
      std::optional<DivKind> kind;
      bool product = consume("*");
      if (!product)
        kind = consumeWord("floordiv") ? std::optional(DivKind::Floor)
               : consumeWord("ceildiv") ? std::optional(DivKind::Ceil)
               : consumeWord("mod")     ? std::optional(DivKind::Mod)
                                        : std::nullopt;
      if (!product && !kind)
        return lhs;
      std::optional<Interval> rhs = unary();
      if (!rhs)
        return std::nullopt;
      lhs = product ? mul(*lhs, *rhs) : divide(*lhs, *rhs, *kind);
    }
    return lhs;
  }

  std::optional<Interval> unary() {
    if (consume("-")) {
      std::optional<Interval> e = unary();
      return e ? std::optional(sub({0, 0, true}, *e)) : std::nullopt;
    }
    if (consume("(")) {
      std::optional<Interval> e = expr();
      return e && consume(")") ? e : std::nullopt;
    }
    return primary();
  }

  std::optional<Interval> primary() {
    skipSpace();
    size_t n = 0;
    if (!rest.empty() && llvm::isDigit(rest[0])) {
      while (n < rest.size() && llvm::isDigit(rest[n]))
        ++n;
      llvm::APInt value;
      if (rest.take_front(n).getAsInteger(10, value))
        return std::nullopt;
      rest = rest.drop_front(n);
      // A literal past 64 bits is MLIR's to refuse; bounded as overflow.
      if (value.getActiveBits() > 63)
        return Interval{0, 0, false};
      Wide v = value.getZExtValue();
      return Interval{v, v, true};
    }
    while (n < rest.size() && (llvm::isAlnum(rest[n]) || rest[n] == '_'))
      ++n;
    if (n == 0)
      return std::nullopt;
    rest = rest.drop_front(n);
    return Interval{0, 1, true};
  }

  StringRef rest;
};
} // namespace

std::optional<std::string> pipesched::sched::checkMapLiteral(StringRef text) {
  std::optional<SmallVector<Interval>> results = LiteralBounder(text).results();
  if (!results)
    return std::nullopt;
  for (auto [i, r] : llvm::enumerate(*results))
    if (!r.ok)
      return ("affine map result " + llvm::Twine(i) +
              " overflows 64-bit arithmetic as written: its constants "
              "cannot be folded exactly")
          .str();
  return std::nullopt;
}
