//===- fuzz_mlir_pipeline.cpp - .mlir spec to rank programs ---------------===//
//
// libFuzzer target (a): the path of pipeline-compile. The input is parsed
// as a `.mlir` module in a context with the sched dialect registered and
// verified; a module that verifies runs the whole `pipeline-lower` pipeline
// (expand, place, simulate, lower-ranks, verify-phase, the deadlock proof)
// with max-jobs = 4096, so that no input can ask for much memory or time;
// a lowered module is verified again and exported as a program document.
// A first line `// lower: OPTIONS` (a comment to the parser) gives the
// pipeline's options as pipeline-compile --lower-options takes them
// ("prefetch-depth=2 transfer-time=1 reorder"); max-jobs stays <= 4096.
// A first line `// search: OPTIONS` instead runs --sched-search first
// ("memory-limit=2 top=3 exact", also memory-limit-bytes), with candidates
// of at most 512 jobs and the exact solver held to 20000 nodes.
// The same module also takes pipeline-compile's own path: the scheduling
// phase, then the program written straight from the plan (compileProgram),
// in JSON and CBOR; where both paths succeed, the two JSON documents must
// be byte-identical, and where only one does, that is a finding too.
// Every failure must be a diagnostic; a crash, sanitizer report, leak,
// timeout, OOM or a difference between the paths is a finding.
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Target/Program.h"
#include "pipesched/Transforms/Passes.h"
#include "pipesched/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: no state carries over, so that every
  // finding reproduces from its input alone.
  DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  // Diagnostics are rendered (their formatting is code under test) and
  // dropped.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &diag) {
    (void)diag.str();
    return success();
  });

  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.mlir"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module || failed(verify(*module)))
    return 0;

  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::StringRef optionText;
  PassManager pm(&context, ModuleOp::getOperationName());
  // pipeline-compile's path starts from the same passes on a copy.
  OwningOpRef<ModuleOp> direct = cast<ModuleOp>((*module)->clone());
  PassManager directPm(&context, ModuleOp::getOperationName());
  if (text.consume_front("// search:")) {
    pipesched::SchedSearchOptions search;
    search.maxJobs = 512;
    search.exactNodes = 20000;
    llvm::SmallVector<llvm::StringRef> words;
    text.take_until([](char c) { return c == '\n'; }).split(words, ' ', -1, false);
    for (llvm::StringRef word : words) {
      auto [key, value] = word.split('=');
      int64_t number = 0;
      bool bad = !value.empty() && value.getAsInteger(10, number);
      if (key == "exact" && value.empty())
        search.exact = true;
      else if (key == "memory-limit" && !bad)
        search.memoryLimit = number;
      else if (key == "memory-limit-bytes" && !bad)
        search.memoryLimitBytes = number;
      else if (key == "top" && !bad && number <= 64)
        search.top = number;
      else
        return 0;
    }
    pm.addPass(pipesched::createSchedSearch(search));
    directPm.addPass(pipesched::createSchedSearch(search));
  } else if (text.consume_front("// lower:")) {
    optionText = text.take_until([](char c) { return c == '\n'; }).trim();
  }
  auto options = pipesched::LowerOptions::createFromString(optionText);
  if (!options)
    return 0;
  if (options->maxJobs > 4096 || optionText.find("max-jobs") == llvm::StringRef::npos)
    options->maxJobs = 4096;
  pipesched::buildLowerPipeline(pm, *options);
  std::string program;
  bool throughIR = succeeded(pm.run(*module)) && succeeded(verify(*module));
  if (throughIR) {
    llvm::raw_string_ostream os(program);
    // The pipeline proved the programs deadlock-free already.
    throughIR = succeeded(pipesched::exportProgram(*module, os));
  }

  pipesched::buildSchedulePipeline(directPm, *options);
  std::string fromPlan, cbor;
  bool planned = succeeded(directPm.run(*direct));
  if (planned) {
    llvm::raw_string_ostream os(fromPlan);
    pipesched::ProgramEncoder out =
        pipesched::ProgramEncoder::toStream(os, pipesched::program::Encoding::Json);
    planned = succeeded(pipesched::compileProgram(*direct, options->prefetchDepth,
                                                  options->verify, out));
  }
  if (planned) {
    llvm::raw_string_ostream os(cbor);
    pipesched::ProgramEncoder out =
        pipesched::ProgramEncoder::toStream(os, pipesched::program::Encoding::Cbor);
    if (failed(pipesched::compileProgram(*direct, options->prefetchDepth,
                                         options->verify, out)))
      abort(); // it just succeeded on the same module
  }
  if (planned != throughIR || (planned && fromPlan != program)) {
    llvm::errs() << "fuzz-mlir-pipeline: the program written from the plan ("
                 << (planned ? "written" : "refused")
                 << ") differs from the one through the rank IR ("
                 << (throughIR ? "written" : "refused") << ")\n";
    abort();
  }
  return 0;
}
