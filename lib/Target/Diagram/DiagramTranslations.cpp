//===- DiagramTranslations.cpp - --sched-to-svg, -text and -trace ---------===//

#include "pipesched/Target/Diagram.h"

#include "pipesched/Dialect/Sched/SchedDialect.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace pipesched;

namespace {
enum class ColorMode { Auto, Always, Never };
} // namespace

/// Builds the diagram of the step under `op`, then renders it.
template <typename Render>
static TranslateFromMLIRFunction drawWith(Render render) {
  return [render](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
    FailureOr<diagram::Diagram> d = diagram::buildDiagram(op);
    if (failed(d))
      return failure();
    render(*d, os);
    return success();
  };
}

void pipesched::diagram::registerDiagramTranslations() {
  static llvm::cl::opt<ColorMode> color(
      "diagram-color",
      llvm::cl::desc("Colours in --sched-to-text (default: when writing to a "
                     "terminal)"),
      llvm::cl::init(ColorMode::Auto),
      llvm::cl::values(clEnumValN(ColorMode::Auto, "auto", "on a terminal"),
                       clEnumValN(ColorMode::Always, "always", "always"),
                       clEnumValN(ColorMode::Never, "never", "never")));
  static llvm::cl::opt<int64_t> columns(
      "diagram-columns",
      llvm::cl::desc("Widest --sched-to-text grid before columns get coarser "
                     "(default 160)"),
      llvm::cl::init(160));
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<sched::SchedDialect>();
  };
  TranslateFromMLIRRegistration svg(
      "sched-to-svg",
      "draw a simulated step as an SVG picture (workers as rows, time to the "
      "right)",
      drawWith([](const Diagram &d, llvm::raw_ostream &os) {
        renderSVG(d, os);
      }),
      dialects);
  TranslateFromMLIRRegistration text(
      "sched-to-text", "draw a simulated step as a fixed-width text grid",
      drawWith([](const Diagram &d, llvm::raw_ostream &os) {
        TextOptions options;
        options.color = color == ColorMode::Always ||
                        (color == ColorMode::Auto && os.has_colors());
        options.maxColumns = columns;
        renderText(d, os, options);
      }),
      dialects);
  TranslateFromMLIRRegistration trace(
      "sched-to-trace",
      "write a simulated step as Chrome trace-event JSON (Perfetto, "
      "chrome://tracing)",
      drawWith([](const Diagram &d, llvm::raw_ostream &os) {
        renderTrace(d, os);
      }),
      dialects);
}
