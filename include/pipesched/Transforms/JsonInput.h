//===- JsonInput.h - bounded reading of the JSON input files ----*- C++ -*-===//
//
// The cost file of --sched-calibrate and the layer file of --sched-partition
// and --sched-search are read through these two functions, which refuse
// what llvm::json could not survive: a file too large to hold parsed (a
// regular file by its size before any byte is read, any other file once it
// has given more), and a document nested too deep (llvm::json::parse
// recurses once per level: 50,000 `[` overflow the stack). The messages do
// not name the file; callers prefix it, as for every other problem.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_JSONINPUT_H
#define PIPESCHED_TRANSFORMS_JSONINPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>

namespace pipesched {

/// The deepest nesting of arrays and objects an input file may have (the
/// cost and layer files need 3 levels).
inline constexpr unsigned kMaxJsonDepth = 64;

/// What a scan of the text found before parsing: `objects[k]` counts the
/// objects opened at depth k (the top-level value is at depth 0).
struct JsonNesting {
  llvm::SmallVector<int64_t, 4> objects;
};

/// Reads the file at `path` ("-": stdin) into `text`. Returns "" or the
/// problem: it cannot be opened or read, or it has more than `maxBytes`
/// bytes (`what`, such as "a layer file", names the kind in the message).
std::string readInputFile(llvm::StringRef path, uint64_t maxBytes,
                          llvm::StringRef what, std::string &text);

/// Parses `text` into `out` once a scan has shown that it nests at most
/// kMaxJsonDepth levels and `precheck` (given the counts of that scan) has
/// returned "". Returns "" or the problem: `JSON nested too deep: ...` at
/// the line and column of the first bracket too many, `invalid JSON: ...`,
/// or what `precheck` returned.
std::string parseJsonInput(
    llvm::StringRef text, llvm::json::Value &out,
    llvm::function_ref<std::string(const JsonNesting &)> precheck = nullptr);

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_JSONINPUT_H
