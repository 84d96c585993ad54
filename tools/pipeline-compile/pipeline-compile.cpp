//===- pipeline-compile.cpp - spec to rank programs in one command --------===//
//
// The user's one-command path: parse a `.mlir` spec, run the lowering
// pipeline (`--pipeline-lower`, options as that pipeline takes them) and
// write the program document. Equivalent to
//   pipeline-opt --pipeline-lower="OPTIONS" SPEC |
//     pipeline-translate --sched-to-program
// without printing and re-parsing the lowered IR, and verifying the IR once
// at the end rather than after every pass.
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Target/Program.h"
#include "pipesched/Tools/DiagnosticDefaults.h"
#include "pipesched/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
llvm::cl::OptionCategory category("pipeline-compile options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<spec.mlir>"),
                                     llvm::cl::init("-"),
                                     llvm::cl::cat(category));
llvm::cl::opt<std::string> outputFile("o",
                                      llvm::cl::desc("Program file (default: stdout)"),
                                      llvm::cl::value_desc("file"),
                                      llvm::cl::init("-"),
                                      llvm::cl::cat(category));
llvm::cl::opt<std::string> lowerOptions(
    "lower-options",
    llvm::cl::desc("Options of the pipeline-lower pipeline, as pipeline-opt "
                   "takes them: \"prefetch-depth=2 transfer-time=1\""),
    llvm::cl::value_desc("options"), llvm::cl::init(""),
    llvm::cl::cat(category));
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-timing (hidden from --help with the other MLIR options): the
  // time of parsing, of each lowering pass and of writing the program, one
  // process (bench/run's compiler-scale table).
  registerDefaultTimingManagerCLOptions();
  llvm::cl::HideUnrelatedOptions(category);
  pipesched::addVersionPrinter();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "pipeline-compile: compile a sched.step spec to per-rank programs\n");

  auto options = pipesched::LowerOptions::createFromString(lowerOptions);
  if (!options) {
    llvm::errs() << "pipeline-compile: invalid --lower-options '"
                 << lowerOptions << "'\n";
    return 1;
  }

  DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "pipeline-compile: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  TimingScope parsing = root.nest("Parser");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  parsing.stop();
  if (!module)
    return 1;

  PassManager pm(&context, ModuleOp::getOperationName());
  pm.enableVerifier(false);
  pm.enableTiming(root);
  pipesched::buildLowerPipeline(pm, *options);
  if (failed(pm.run(*module)) || failed(verify(*module)))
    return 1;

  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "pipeline-compile: " << error << "\n";
    return 1;
  }
  // The pipeline proved the programs already (unless told not to).
  TimingScope emitting = root.nest("Emit program");
  if (failed(pipesched::exportProgram(*module, output->os(), /*verify=*/false)))
    return 1;
  output->keep();
  emitting.stop();
  return 0;
}
