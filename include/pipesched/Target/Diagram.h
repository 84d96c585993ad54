//===- Diagram.h - a simulated schedule, seen three ways --------*- C++ -*-===//
//
// A simulated step as what its pictures need: each worker's jobs on a time
// axis and the communication between workers (docs/diagrams.md). Built once
// from the IR (buildDiagram, through the communication plan the lowering
// uses, so the marks are the transfers the programs make), then rendered
// without MLIR as
//  - SVG: workers as rows, time to the right, a box per job sized by its
//    duration, coloured by microbatch and labelled `<stage><F|B|I|W><mb>`,
//    transfers and weight fetches as thin lines, a legend and a time axis;
//  - text: a fixed-width grid for a terminal, ANSI colours on request;
//  - a Chrome trace (include/pipesched/Program/TraceEvents.h), the format
//    `pipeline-run --trace` writes the measured timeline in.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TARGET_DIAGRAM_H
#define PIPESCHED_TARGET_DIAGRAM_H

#include "pipesched/Scheduling/CommPlan.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::sched {
class StepOp;
} // namespace pipesched::sched

namespace pipesched::diagram {

/// One job on its worker's row.
struct Job {
  int32_t worker = 0;
  int64_t stage = 0, microbatch = 0;
  /// torch's action letter: F forward, B whole backward, I input-gradient
  /// half, W weight-gradient half; G, J, C the scan jobs of BPPSA.
  char kind = 'F';
  int64_t start = 0, end = 0;
  /// The label: `<stage><kind><microbatch>`, or an overlapped pair's
  /// `<fwd>;<bwd>` (DualPipe's F&B, one box).
  std::string label;
  /// Drawn inside the box of the overlapped forward it belongs to.
  bool partOfPair = false;
};

/// Communication between workers, as thin marks: the plan's messages.
struct Mark {
  using Kind = scheduling::Message::Kind;
  Kind kind = scheduling::Message::Activation;
  int32_t from = 0, to = 0;
  int64_t sent = 0, arrived = 0; ///< times (arrived >= sent)
  int64_t stage = 0, microbatch = -1, bytes = 0;
};

struct Diagram {
  std::string title; ///< e.g. the strategy, "1f1b"
  int64_t stages = 0, microbatches = 0;
  int32_t workers = 0;
  int64_t makespan = 0;
  /// Nanoseconds per tick; 0: abstract ticks.
  int64_t tickNs = 0;
  std::vector<Job> jobs;   ///< by worker, then start
  std::vector<Mark> marks; ///< by send time

  /// Jobs drawn as boxes of their own (not the tail of a pair).
  size_t boxCount() const;
};

/// Reads a simulated step (every job placed, ordered and timed); emits a
/// located error otherwise.
llvm::FailureOr<Diagram> buildDiagram(sched::StepOp step);

/// The step under `op` (a module with one simulated step, or the step).
llvm::FailureOr<Diagram> buildDiagram(mlir::Operation *op);

/// An SVG document (`standalone`) or an `<svg>` element to inline in HTML.
void renderSVG(const Diagram &diagram, llvm::raw_ostream &os,
               bool standalone = true);

struct TextOptions {
  bool color = false;      ///< ANSI colours by microbatch
  int64_t maxColumns = 160; ///< coarser columns beyond this many
};
void renderText(const Diagram &diagram, llvm::raw_ostream &os,
                const TextOptions &options = {});

/// Chrome trace-event JSON: a process per worker, compute and
/// communication tracks; ticks as microseconds when the step has no time
/// unit.
void renderTrace(const Diagram &diagram, llvm::raw_ostream &os);

/// Registers `--sched-to-svg`, `--sched-to-text` and `--sched-to-trace`
/// with mlir-translate's registry.
void registerDiagramTranslations();

} // namespace pipesched::diagram

#endif // PIPESCHED_TARGET_DIAGRAM_H
