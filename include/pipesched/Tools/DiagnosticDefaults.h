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

} // namespace pipesched

#endif // PIPESCHED_TOOLS_DIAGNOSTICDEFAULTS_H
