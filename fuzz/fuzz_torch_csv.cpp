//===- fuzz_torch_csv.cpp - the torch CSV importer ------------------------===//
//
// libFuzzer target (b): `pipeline-translate --import-torch-csv`. The input
// is read by importTorchCSV as a torch.distributed.pipelining per-rank
// schedule; an imported module is verified (as mlir-translate does), and
// one that verifies is written back as CSV (exportTorchCSV), the round trip
// of docs/torch-csv.md. Malformed input must give located diagnostics; a
// crash, sanitizer report, leak, timeout or OOM is a finding.
//
//===----------------------------------------------------------------------===//

#include "pipesched/InitAllDialects.h"
#include "pipesched/Target/TorchCSV.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  pipesched::registerAllDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &diag) {
    (void)diag.str();
    return success();
  });

  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.csv"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = pipesched::importTorchCSV(sources, &context);
  if (!module || failed(verify(*module)))
    return 0;

  std::string csv;
  llvm::raw_string_ostream os(csv);
  (void)pipesched::exportTorchCSV(*module, os);
  return 0;
}
