//===- Pipelines.h - registered pass pipelines ------------------*- C++ -*-===//
//
// The lowering pipeline as a library: another MLIR compiler builds it into
// its own pass manager with buildLowerPipeline.
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_TRANSFORMS_PIPELINES_H
#define PIPESCHED_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "pipesched/Scheduling/Partition.h"

namespace pipesched {

/// Options of `pipeline-lower` (typed; `--pipeline-lower="transfer-time=2"`).
/// Under the pass's own name: every option of --sched-partition (`layers`,
/// `memory-limit-bytes`, `partition`), --sched-calibrate (`costs`),
/// --sched-expand (`max-jobs`) and --sched-simulate (`transfer-time`,
/// `memory-cap`, `memory-cap-bytes`, `reorder`, `no-memory-cap`), and
/// --sched-lower-ranks's `prefetch-depth`. Renamed: --sched-bppsa's `width`
/// is `bppsa-width` (0, the default, leaves the pass out), and
/// --sched-lower-ranks's `verify-plan` is `verify`. Shared: `max-jobs` goes to --sched-expand
/// and --sched-bppsa alike. Not exposed: --sched-bppsa's `rows`, `layers`,
/// `form`, `band`, `placement` and `macs-per-unit` (they keep their
/// defaults), and --sched-verify-phase's `phase` (set by the pipeline).
struct LowerOptions : public mlir::PassPipelineOptions<LowerOptions> {
  Option<std::string> layers{
      *this, "layers",
      llvm::cl::desc("Partition a layer file into every step's stages first "
                     "(--sched-partition, docs/partition.md)"),
      llvm::cl::init("")};
  Option<int64_t> memoryLimitBytes{
      *this, "memory-limit-bytes",
      llvm::cl::desc("--sched-partition's bytes per stage; 0 = no limit"),
      llvm::cl::init(0)};
  Option<scheduling::PartitionMethod> partition{
      *this, "partition",
      llvm::cl::desc("--sched-partition's method"),
      llvm::cl::init(scheduling::PartitionMethod::Optimal),
      llvm::cl::values(
          clEnumValN(scheduling::PartitionMethod::Optimal, "optimal",
                     "the least bottleneck (dynamic program)"),
          clEnumValN(scheduling::PartitionMethod::Uniform, "uniform",
                     "equal layer counts, for comparison"))};
  Option<std::string> costs{
      *this, "costs",
      llvm::cl::desc("Calibrate every step with this cost file first "
                     "(--sched-calibrate; pipeline-run --profile writes it)"),
      llvm::cl::init("")};
  Option<int64_t> maxJobs{
      *this, "max-jobs",
      llvm::cl::desc("Refuse to expand a step, or scan it (bppsa-width), "
                     "into more jobs than this"),
      llvm::cl::init(int64_t(1) << 22)};
  Option<int64_t> transferTime{
      *this, "transfer-time",
      llvm::cl::desc("Time added to an input made on another worker; -1 = "
                     "the cost's `transfer` (0 without one)"),
      llvm::cl::init(-1)};
  Option<int64_t> memoryCap{
      *this, "memory-cap",
      llvm::cl::desc("Live activations per worker; 0 = the strategy's cap"),
      llvm::cl::init(0)};
  Option<int64_t> memoryCapBytes{
      *this, "memory-cap-bytes",
      llvm::cl::desc("Live activation bytes per worker; 0 = none"),
      llvm::cl::init(0)};
  Option<bool> reorder{
      *this, "reorder",
      llvm::cl::desc("Schedule by priority even if every job has an order"),
      llvm::cl::init(false)};
  Option<bool> noMemoryCap{*this, "no-memory-cap",
                           llvm::cl::desc("Ignore the strategy's memory cap"),
                           llvm::cl::init(false)};
  Option<int64_t> bppsaWidth{
      *this, "bppsa-width",
      llvm::cl::desc("Scan each microbatch's backward (BPPSA) with stages of "
                     "this width (--sched-bppsa=width=H after placement); "
                     "0 = back-propagation"),
      llvm::cl::init(0)};
  Option<int64_t> prefetchDepth{
      *this, "prefetch-depth",
      llvm::cl::desc("Fetch weights this many jobs ahead"), llvm::cl::init(1)};
  Option<bool> verify{
      *this, "verify",
      llvm::cl::desc("Verify the communication plan and prove the rank "
                     "programs deadlock-free (default on)"),
      llvm::cl::init(true)};
};

/// Phase 1 (`pipeline-schedule`), on every `sched.step`: --sched-partition
/// (with `layers`), --sched-calibrate (with `costs`, which replaces the
/// per-stage times), --sched-expand, --sched-place, --sched-bppsa (with
/// `bppsa-width` > 0) and --sched-simulate, in that order; then
/// --sched-verify-phase=phase=scheduled on the module.
void buildSchedulePipeline(mlir::OpPassManager &pm, const LowerOptions &options);

/// Phase 2 (`pipeline-ranks`): every simulated step becomes a
/// `sched.program` (--sched-lower-ranks, which verifies and proves its plan
/// deadlock-free unless `verify` is off), then
/// --sched-verify-phase=phase=lowered. Reads `prefetch-depth` and `verify`.
void buildRanksPipeline(mlir::OpPassManager &pm, const LowerOptions &options);

/// Both phases: buildSchedulePipeline then buildRanksPipeline. `pm` runs
/// on a builtin.module.
void buildLowerPipeline(mlir::OpPassManager &pm, const LowerOptions &options);

/// Registers `pipeline-schedule`, `pipeline-ranks` and `pipeline-lower`.
void registerPipelines();

} // namespace pipesched

#endif // PIPESCHED_TRANSFORMS_PIPELINES_H
