//===- pipeline-compile.cpp - spec to rank programs in one command --------===//
//
// The user's one-command path: parse a `.mlir` spec, run the scheduling
// phase of the lowering pipeline (`--pipeline-schedule`, options as
// `--pipeline-lower` takes them), plan the communication as
// --sched-lower-ranks does and write the programs straight from the plan
// (compileProgram). The bytes are those of
//   pipeline-opt --pipeline-lower="OPTIONS" SPEC |
//     pipeline-translate --sched-to-program
// without building, printing and re-parsing the rank IR: at 10^6 jobs
// that IR is over 4 million ops (docs/bench.md).
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Target/Program.h"
#include "pipesched/Tools/DiagnosticDefaults.h"
#include "pipesched/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <optional>

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
llvm::cl::opt<pipesched::ProgramLayout> layout(
    "layout", llvm::cl::desc("How the program is laid out"),
    llvm::cl::values(
        clEnumValN(pipesched::ProgramLayout::Single, "single",
                   "one document, -o FILE (default)"),
        clEnumValN(pipesched::ProgramLayout::PerRank, "per-rank",
                   "a directory -o DIR: an index and one file per rank, "
                   "each rank reads only its own")),
    llvm::cl::init(pipesched::ProgramLayout::Single), llvm::cl::cat(category));
llvm::cl::opt<pipesched::program::Encoding> encoding(
    "encoding", llvm::cl::desc("How each file is encoded"),
    llvm::cl::values(clEnumValN(pipesched::program::Encoding::Json, "json",
                                "readable, one op per line (default)"),
                     clEnumValN(pipesched::program::Encoding::Cbor, "cbor",
                                "CBOR (RFC 8949): smaller, faster to read")),
    llvm::cl::init(pipesched::program::Encoding::Json),
    llvm::cl::cat(category));
// For comparison (bench/run): the lowering through the rank IR, as
// `pipeline-opt --pipeline-lower | pipeline-translate` runs it.
llvm::cl::opt<bool> throughRankIR(
    "through-rank-ir",
    llvm::cl::desc("Build the rank programs' IR (--pipeline-lower) and write "
                   "the program from it: the same bytes, slower"),
    llvm::cl::init(false), llvm::cl::Hidden, llvm::cl::cat(category));
llvm::cl::opt<std::string> lowerOptions(
    "lower-options",
    llvm::cl::desc("Options of the pipeline-lower pipeline, as pipeline-opt "
                   "takes them: \"prefetch-depth=2 transfer-time=1\""),
    llvm::cl::value_desc("options"), llvm::cl::init(""),
    llvm::cl::cat(category));
} // namespace

/// The per-rank layout's directory, checked before any work (a rank of a
/// per-rank run reads its own program only and trusts the compiler's proof
/// of the whole, docs/program-format.md). Unset for one document.
static LogicalResult
openDirectory(const pipesched::LowerOptions &options,
              std::optional<pipesched::ProgramEncoder> &directory) {
  if (layout != pipesched::ProgramLayout::PerRank)
    return success();
  if (outputFile == "-") {
    llvm::errs() << "pipeline-compile: --layout=per-rank writes a "
                    "directory: name it with -o DIR\n";
    return failure();
  }
  if (!options.verify) {
    llvm::errs() << "pipeline-compile: --layout=per-rank needs the plan "
                    "verified and proven deadlock-free: its ranks do not "
                    "check each other's programs (drop verify=false)\n";
    return failure();
  }
  llvm::Expected<pipesched::ProgramEncoder> out =
      pipesched::ProgramEncoder::toDirectory(outputFile, encoding);
  if (!out) {
    llvm::errs() << "pipeline-compile: " << llvm::toString(out.takeError())
                 << "\n";
    return failure();
  }
  directory.emplace(std::move(*out));
  return success();
}

/// The spec, parsed and verified (null after a located diagnostic).
static OwningOpRef<ModuleOp> parseSpec(MLIRContext &context,
                                       llvm::SourceMgr &sources,
                                       TimingScope &root) {
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "pipeline-compile: " << error << "\n";
    return nullptr;
  }
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  TimingScope parsing = root.nest("Parser");
  return parseSourceFile<ModuleOp>(sources, &context);
}

/// Writes the one document to -o (a full disk or a closed pipe: a message,
/// finishOutput).
static int
writeDocument(llvm::function_ref<LogicalResult(pipesched::ProgramEncoder &)>
                  write) {
  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "pipeline-compile: " << error << "\n";
    return 1;
  }
  pipesched::ProgramEncoder out =
      pipesched::ProgramEncoder::toStream(output->os(), encoding);
  if (failed(write(out)))
    return 1;
  return pipesched::finishOutput(*output, "pipeline-compile", outputFile);
}

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

  std::optional<pipesched::ProgramEncoder> directory;
  if (failed(openDirectory(*options, directory)))
    return 1;

  DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sources;
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  OwningOpRef<ModuleOp> module = parseSpec(context, sources, root);
  if (!module)
    return 1;

  // The passes' own output is checked by the phase verification between
  // them (and by the verifier in pipeline-opt's tests), not re-verified
  // here after every pass.
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.enableVerifier(false);
  pm.enableTiming(root);
  pipesched::buildSchedulePipeline(pm, *options);
  if (throughRankIR)
    pipesched::buildRanksPipeline(pm, *options);
  if (failed(pm.run(*module)))
    return 1;
  // Through the rank IR the pipeline proved the programs already.
  auto write = [&](pipesched::ProgramEncoder &out) -> LogicalResult {
    if (!throughRankIR)
      return pipesched::compileProgram(*module, options->prefetchDepth,
                                       options->verify, out, &root);
    TimingScope emitting = root.nest("Emit program");
    return pipesched::exportProgram(*module, out);
  };

  if (directory)
    return failed(write(*directory));
  return writeDocument(write);
}
