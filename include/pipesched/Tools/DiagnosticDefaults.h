//===- DiagnosticDefaults.h - defaults of the pipesched tools ---*- C++ -*-===//
//
// A failing pass on a step of 10^5 jobs would print the whole step in
// generic form ("see current operation"): megabytes. The tools print the
// located message only, unless the user asks for the op with
// --mlir-print-op-on-diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TOOLS_DIAGNOSTICDEFAULTS_H
#define PIPESCHED_TOOLS_DIAGNOSTICDEFAULTS_H

#include "pipesched/Program/Schema.h"
#include "pipesched/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <vector>

namespace pipesched {

/// argv with `--mlir-print-op-on-diagnostic=false` inserted first unless
/// the user gave the option (the later occurrence wins either way).
inline std::vector<char *> withDiagnosticDefaults(int argc, char **argv) {
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  std::vector<char *> args(argv, argv + argc);
  args.insert(args.begin() + (argc > 0 ? 1 : 0), quiet);
  args.push_back(nullptr);
  return args;
}

/// Hides every command-line option registered so far (LLVM's own, loaded
/// with libLLVM: `--amdgpu-*`, `--polly-*`, ...) from `--help`; they stay
/// usable and listed under `--help-hidden`. Call before the MLIR driver
/// registers its options, which stay visible with pipesched's passes.
inline void hideLLVMOptions() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    if (name == "help" || name == "help-hidden" || name == "version")
      continue;
    entry.second->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// `--version` names pipesched's version and the program format it writes
/// (the format version is the stability promise of docs/program-format.md),
/// before LLVM's.
inline void addVersionPrinter() {
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "pipesched " PIPESCHED_VERSION ", program format version "
       << program::kVersion << "\n";
  });
}

/// A write that fails when the output is closed (a full disk) ends in
/// LLVM's fatal "IO failure on output stream", worded like a crash. The
/// tools say instead `TOOL: cannot write the output: REASON`, exit 1;
/// other fatal errors keep LLVM's wording.
inline void sayOutputErrorsPlainly(const char *tool) {
  llvm::install_fatal_error_handler(
      [](void *tool, const char *reason, bool) {
        llvm::StringRef text(reason);
        if (text.consume_front("IO failure on output stream: "))
          llvm::errs() << static_cast<const char *>(tool)
                       << ": cannot write the output: " << text << "\n";
        else
          llvm::errs() << "LLVM ERROR: " << text << "\n";
      },
      const_cast<char *>(tool));
}

/// Closes a tool's output and keeps it, or, on a full disk or a closed
/// pipe, says `TOOL: PATH: cannot write: REASON` (not the stream's fatal
/// error at exit) and drops it. The tool's exit status: 0 or 1.
inline int finishOutput(llvm::ToolOutputFile &output, const char *tool,
                        llvm::StringRef path) {
  output.os().close();
  if (output.os().has_error()) {
    llvm::errs() << tool << ": " << path
                 << ": cannot write: " << output.os().error().message() << "\n";
    output.os().clear_error();
    return 1;
  }
  output.keep();
  return 0;
}

} // namespace pipesched

#endif // PIPESCHED_TOOLS_DIAGNOSTICDEFAULTS_H
