//===- JsonScan.h - JSON nesting bounded before parsing ---------*- C++ -*-===//
//
// One scan of a JSON text's tokens, without parsing: where it first nests
// too deep. Parsers recurse (llvm::json) or cost memory per level, so the
// compiler's cost and layer files and the runtime's programs bound their
// nesting with it first. Plain C++17, shared by both.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_SUPPORT_JSONSCAN_H
#define PIPESCHED_SUPPORT_JSONSCAN_H

#include <cstddef>
#include <string_view>

namespace pipesched::json_scan {

/// The byte offset of the first `[` or `{` that opens more than `maxDepth`
/// levels of arrays and objects in `text`, or std::string_view::npos.
/// Strings are skipped (escapes honoured); a stray closer is the parser's
/// to report. `onObject(depth)` is called for each object opened, at its
/// depth (the top-level value is at depth 0).
template <typename OnObject>
size_t firstTooDeep(std::string_view text, unsigned maxDepth, OnObject onObject) {
  unsigned depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (depth == maxDepth)
        return i;
      if (c == '{')
        onObject(depth);
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

/// Without counting objects.
inline size_t firstTooDeep(std::string_view text, unsigned maxDepth) {
  return firstTooDeep(text, maxDepth, [](unsigned) {});
}

} // namespace pipesched::json_scan

#endif // PIPESCHED_SUPPORT_JSONSCAN_H
