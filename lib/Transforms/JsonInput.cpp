//===- JsonInput.cpp - bounded reading of the JSON input files ------------===//

#include "pipesched/Transforms/JsonInput.h"
#include "pipesched/Support/JsonScan.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace pipesched;

namespace {

/// "[LINE:COL, byte=N]" for byte `offset` of `text`, as llvm::json writes
/// the place of a parse error (line from 1, column from 0).
std::string placeOf(llvm::StringRef text, size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = lineStart == llvm::StringRef::npos ? offset
                                                     : offset - lineStart - 1;
  return llvm::formatv("[{0}:{1}, byte={2}]", line, column, offset).str();
}

/// Counts the objects `text` opens per depth; "" or where it nests too deep.
std::string scanNesting(llvm::StringRef text, JsonNesting &nesting) {
  size_t tooDeep = json_scan::firstTooDeep(
      std::string_view(text.data(), text.size()), kMaxJsonDepth,
      [&](unsigned depth) {
        if (nesting.objects.size() <= depth)
          nesting.objects.resize(depth + 1, 0);
        ++nesting.objects[depth];
      });
  if (tooDeep == std::string_view::npos)
    return "";
  return "JSON nested too deep: " + placeOf(text, tooDeep) + ": more than " +
         std::to_string(kMaxJsonDepth) + " levels of arrays and objects";
}

} // namespace

std::string pipesched::readInputFile(llvm::StringRef path, uint64_t maxBytes,
                                     llvm::StringRef what, std::string &text) {
  auto cannot = [&](llvm::StringRef verb, std::error_code ec) {
    return ("cannot " + verb + " input file '" + path + "': " + ec.message())
        .str();
  };
  // A regular file is judged by its size, before any byte is read.
  llvm::sys::fs::file_status status;
  if (path != "-" && !llvm::sys::fs::status(path, status) &&
      status.type() == llvm::sys::fs::file_type::regular_file &&
      status.getSize() > maxBytes)
    return ("the file has " + llvm::Twine(status.getSize()) +
            " bytes, more than the " + llvm::Twine(maxBytes) + " " + what +
            " may have")
        .str();
  llvm::sys::fs::file_t file = llvm::sys::fs::getStdinHandle();
  if (path != "-") {
    llvm::Expected<llvm::sys::fs::file_t> opened =
        llvm::sys::fs::openNativeFileForRead(path);
    if (!opened)
      return cannot("open", llvm::errorToErrorCode(opened.takeError()));
    file = *opened;
  }
  // Anything else (a pipe, a device) is read until it has given too much.
  text.clear();
  std::string error;
  char chunk[1 << 16];
  while (error.empty()) {
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFile(file, chunk);
    if (!n)
      error = cannot("read", llvm::errorToErrorCode(n.takeError()));
    else if (*n == 0)
      break;
    else if (text.size() + *n > maxBytes)
      error = ("the file has more than " + llvm::Twine(maxBytes) +
               " bytes, the most " + what + " may have")
                  .str();
    else
      text.append(chunk, *n);
  }
  if (path != "-")
    llvm::sys::fs::closeFile(file);
  return error;
}

std::string pipesched::parseJsonInput(
    llvm::StringRef text, llvm::json::Value &out,
    llvm::function_ref<std::string(const JsonNesting &)> precheck) {
  JsonNesting nesting;
  if (std::string problem = scanNesting(text, nesting); !problem.empty())
    return problem;
  if (precheck)
    if (std::string problem = precheck(nesting); !problem.empty())
      return problem;
  llvm::Expected<llvm::json::Value> doc = llvm::json::parse(text);
  if (!doc)
    return "invalid JSON: " + llvm::toString(doc.takeError());
  out = std::move(*doc);
  return "";
}
