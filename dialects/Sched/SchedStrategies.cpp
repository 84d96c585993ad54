//===- SchedStrategies.cpp - named strategies and placement maps ----------===//
//
// Each named strategy expands, for a shape (S, B, W), to affine maps over
// (s, b, d) = (d0, d1, d2). See docs/strategies.md for the table.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/MapBounds.h"
#include "pipesched/Dialect/Sched/SchedScheme.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace pipesched::sched;

namespace {
/// The dimensions (s, b, d) of a placement map.
struct Dims {
  AffineExpr s, b, d;
  MLIRContext *ctx;
  explicit Dims(MLIRContext *ctx)
      : s(getAffineDimExpr(0, ctx)), b(getAffineDimExpr(1, ctx)),
        d(getAffineDimExpr(2, ctx)), ctx(ctx) {}
  AffineMap map(AffineExpr result) const {
    return AffineMap::get(3, 0, result, ctx);
  }
};
} // namespace

/// h(x, y) = R * (y mod G) + (x mod R): the looped-pipeline hash.
static AffineExpr loopedHash(AffineExpr x, AffineExpr y, int64_t groups,
                             int64_t ring) {
  return y % groups * ring + x % ring;
}

static LogicalResult
requireMultiple(int64_t value, StringRef valueName, int64_t divisor,
                StringRef divisorName, StringRef strategy, StringRef why,
                function_ref<InFlightDiagnostic()> emitError) {
  if (value % divisor == 0)
    return success();
  return emitError() << strategy << " needs " << valueName << " (" << value
                     << ") to be a multiple of " << divisorName << " ("
                     << divisor << "): " << why;
}

//===----------------------------------------------------------------------===//
// ddp, fsdp
//===----------------------------------------------------------------------===//

static constexpr const char *kAccumulates =
    "each worker accumulates gradients over B/W microbatches";

LogicalResult DdpAttr::verifyShape(int64_t, int64_t B, int64_t W,
                                   function_ref<InFlightDiagnostic()> err) const {
  return requireMultiple(B, "the microbatch count", W, "the worker count",
                         "ddp", kAccumulates, err);
}
AffineMap DdpAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  Dims x(getContext());
  return x.map(x.b % W);
}
AffineMap DdpAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy DdpAttr::getDefaultPriority() const {
  return PriorityPolicy::DepthFirst;
}

// FSDP computes exactly as DDP; only the weights are sharded by stage.
LogicalResult FsdpAttr::verifyShape(int64_t, int64_t B, int64_t W,
                                    function_ref<InFlightDiagnostic()> err) const {
  return requireMultiple(B, "the microbatch count", W, "the worker count",
                         "fsdp", kAccumulates, err);
}
AffineMap FsdpAttr::getComputeMap(int64_t S, int64_t B, int64_t W) const {
  return DdpAttr::get(getContext()).getComputeMap(S, B, W);
}
AffineMap FsdpAttr::getWeightsMap(int64_t, int64_t, int64_t W) const {
  Dims x(getContext());
  return x.map(x.s % W);
}
PriorityPolicy FsdpAttr::getDefaultPriority() const {
  return PriorityPolicy::DepthFirst;
}

//===----------------------------------------------------------------------===//
// gpipe, 1f1b
//===----------------------------------------------------------------------===//

static LogicalResult verifyConsecutiveStages(StringRef strategy, int64_t S,
                                             int64_t W,
                                             function_ref<InFlightDiagnostic()> err) {
  return requireMultiple(S, "the stage count", W, "the worker count", strategy,
                         "each worker holds S/W consecutive stages", err);
}
static AffineMap consecutiveStages(MLIRContext *ctx, int64_t S, int64_t W) {
  Dims x(ctx);
  return x.map(x.s.floorDiv(S / W));
}

LogicalResult GpipeAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                     function_ref<InFlightDiagnostic()> err) const {
  return verifyConsecutiveStages("gpipe", S, W, err);
}
AffineMap GpipeAttr::getComputeMap(int64_t S, int64_t, int64_t W) const {
  return consecutiveStages(getContext(), S, W);
}
AffineMap GpipeAttr::getWeightsMap(int64_t S, int64_t, int64_t W) const {
  return consecutiveStages(getContext(), S, W);
}
PriorityPolicy GpipeAttr::getDefaultPriority() const {
  return PriorityPolicy::FillDrain;
}

// 1F1B places exactly as GPipe; only its priority and memory cap differ.
LogicalResult OneFOneBAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                        function_ref<InFlightDiagnostic()> err) const {
  return verifyConsecutiveStages("1f1b", S, W, err);
}
AffineMap OneFOneBAttr::getComputeMap(int64_t S, int64_t B, int64_t W) const {
  return GpipeAttr::get(getContext()).getComputeMap(S, B, W);
}
AffineMap OneFOneBAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return GpipeAttr::get(getContext()).getWeightsMap(S, B, W);
}
PriorityPolicy OneFOneBAttr::getDefaultPriority() const {
  return PriorityPolicy::BackwardFirst;
}
// Worker w holds k = S/W consecutive stages; 1F1B keeps W - w microbatches
// in flight there, k activations each.
int64_t OneFOneBAttr::getMemoryCap(int64_t S, int64_t, int64_t W,
                                   int64_t worker) const {
  return S / W * (W - worker);
}

//===----------------------------------------------------------------------===//
// interleaved_1f1b
//===----------------------------------------------------------------------===//

LogicalResult
Interleaved1F1BAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t chunks, int64_t group) {
  if (chunks < 1)
    return emitError() << "interleaved_1f1b needs at least one chunk per "
                          "worker, got "
                       << chunks;
  if (group < kTorchGroup)
    return emitError() << "interleaved_1f1b needs a positive group, got "
                       << group;
  return success();
}

/// torch's `Interleaved1F1B`: max(1, B / W) rounds of equal size.
static int64_t torchRounds(int64_t B, int64_t W) { return std::max<int64_t>(1, B / W); }

LogicalResult
Interleaved1F1BAttr::verifyShape(int64_t S, int64_t B, int64_t W,
                                 function_ref<InFlightDiagnostic()> err) const {
  int64_t needed = 0;
  if (llvm::MulOverflow(getChunks(), W, needed))
    return err() << "interleaved_1f1b<chunks = " << getChunks()
                 << "> needs S = chunks * W stages, more than 2^63 with W = "
                 << W;
  if (S != needed)
    return err() << "interleaved_1f1b<chunks = " << getChunks()
                 << "> needs S = chunks * W = " << needed
                 << " stages, got " << S;
  if (getGroup() == kTorchGroup && B % torchRounds(B, W) != 0)
    return err() << "interleaved_1f1b with group = torch needs B (" << B
                 << ") to be a multiple of max(1, B / W) = "
                 << torchRounds(B, W) << " rounds, as torch does";
  return success();
}
AffineMap Interleaved1F1BAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  Dims x(getContext());
  return x.map(x.s % W);
}
AffineMap Interleaved1F1BAttr::getWeightsMap(int64_t S, int64_t B,
                                             int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy Interleaved1F1BAttr::getDefaultPriority() const {
  return PriorityPolicy::Interleaved;
}
int64_t Interleaved1F1BAttr::getMicrobatchGroup(int64_t, int64_t B,
                                                int64_t W) const {
  if (getGroup() == kTorchGroup)
    return B / torchRounds(B, W);
  return getGroup();
}

Attribute Interleaved1F1BAttr::parse(AsmParser &p, Type) {
  int64_t chunks = 0, group = kMegatronGroup;
  if (p.parseLess() || p.parseKeyword("chunks") || p.parseEqual() ||
      p.parseInteger(chunks))
    return {};
  if (succeeded(p.parseOptionalComma())) {
    if (p.parseKeyword("group") || p.parseEqual())
      return {};
    SMLoc loc = p.getCurrentLocation();
    if (succeeded(p.parseOptionalKeyword("torch")))
      group = kTorchGroup;
    else if (failed(p.parseOptionalKeyword("megatron"))) {
      if (p.parseInteger(group))
        return {};
      if (group < 1) {
        p.emitError(loc) << "interleaved_1f1b group must be megatron, torch "
                            "or a positive size, got "
                         << group;
        return {};
      }
    }
  }
  if (p.parseGreater())
    return {};
  return getChecked([&] { return p.emitError(p.getNameLoc()); },
                    p.getContext(), chunks, group);
}

void Interleaved1F1BAttr::print(AsmPrinter &p) const {
  p << "<chunks = " << getChunks();
  if (getGroup() == kTorchGroup)
    p << ", group = torch";
  else if (getGroup() != kMegatronGroup)
    p << ", group = " << getGroup();
  p << '>';
}

//===----------------------------------------------------------------------===//
// lpp, fslpp
//===----------------------------------------------------------------------===//

static LogicalResult verifyGroupsRing(StringRef strategy, int64_t groups,
                                      int64_t ring,
                                      function_ref<InFlightDiagnostic()> err) {
  if (groups < 1 || ring < 1)
    return err() << strategy << " needs groups >= 1 and ring >= 1, got groups = "
                 << groups << ", ring = " << ring;
  return success();
}
static LogicalResult verifyLoopedShape(StringRef strategy, int64_t groups,
                                       int64_t ring, int64_t S, int64_t W,
                                       function_ref<InFlightDiagnostic()> err) {
  int64_t needed = 0;
  if (llvm::MulOverflow(groups, ring, needed))
    return err() << strategy << "<groups = " << groups << ", ring = " << ring
                 << "> needs W = groups * ring workers, more than 2^63";
  if (W != needed)
    return err() << strategy << "<groups = " << groups << ", ring = " << ring
                 << "> needs W = groups * ring = " << needed
                 << " workers, got " << W;
  return requireMultiple(S, "the stage count", ring, "the ring size", strategy,
                         "each group loops over the stages R at a time", err);
}

LogicalResult LppAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t groups, int64_t ring) {
  return verifyGroupsRing("lpp", groups, ring, emitError);
}
LogicalResult LppAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                   function_ref<InFlightDiagnostic()> err) const {
  return verifyLoopedShape("lpp", getGroups(), getRing(), S, W, err);
}
AffineMap LppAttr::getComputeMap(int64_t, int64_t, int64_t) const {
  Dims x(getContext());
  return x.map(loopedHash(x.s, x.b, getGroups(), getRing()));
}
AffineMap LppAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy LppAttr::getDefaultPriority() const {
  return PriorityPolicy::FillDrain;
}

LogicalResult FslppAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t groups, int64_t ring) {
  return verifyGroupsRing("fslpp", groups, ring, emitError);
}
LogicalResult FslppAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                     function_ref<InFlightDiagnostic()> err) const {
  return verifyLoopedShape("fslpp", getGroups(), getRing(), S, W, err);
}
// FSLPP computes exactly as LPP; only the weights are sharded by stage.
AffineMap FslppAttr::getComputeMap(int64_t S, int64_t B, int64_t W) const {
  return LppAttr::get(getContext(), getGroups(), getRing())
      .getComputeMap(S, B, W);
}
// The seed prints w_FSLPP = (h(s,b), h(s,s)) in its (weights, compute) order,
// which would make the stage pick the compute worker; its text says the
// weights use the stage id. The weights map is h(s, s).
AffineMap FslppAttr::getWeightsMap(int64_t, int64_t, int64_t) const {
  Dims x(getContext());
  return x.map(loopedHash(x.s, x.s, getGroups(), getRing()));
}
PriorityPolicy FslppAttr::getDefaultPriority() const {
  return PriorityPolicy::FillDrain;
}

//===----------------------------------------------------------------------===//
// looped_bfs, zb_h1, zbv
//===----------------------------------------------------------------------===//

/// `S = chunks * W`, stage s on worker s mod W (the loop placement).
static LogicalResult verifyLoopPlacement(StringRef strategy, int64_t chunks,
                                         int64_t S, int64_t W,
                                         function_ref<InFlightDiagnostic()> err) {
  int64_t needed = 0;
  if (llvm::MulOverflow(chunks, W, needed) || S != needed)
    return err() << strategy << "<chunks = " << chunks
                 << "> needs S = chunks * W stages, got S = " << S
                 << ", W = " << W;
  return success();
}
static LogicalResult verifyChunks(StringRef strategy, int64_t chunks,
                                  function_ref<InFlightDiagnostic()> err) {
  if (chunks < 1)
    return err() << strategy << " needs at least one chunk per worker, got "
                 << chunks;
  return success();
}

LogicalResult LoopedBfsAttr::verify(function_ref<InFlightDiagnostic()> err,
                                    int64_t chunks) {
  return verifyChunks("looped_bfs", chunks, err);
}
LogicalResult LoopedBfsAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                         function_ref<InFlightDiagnostic()> err) const {
  return verifyLoopPlacement("looped_bfs", getChunks(), S, W, err);
}
AffineMap LoopedBfsAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  Dims x(getContext());
  return x.map(x.s % W);
}
AffineMap LoopedBfsAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy LoopedBfsAttr::getDefaultPriority() const {
  return PriorityPolicy::LoopedBFS;
}

LogicalResult ZbH1Attr::verify(function_ref<InFlightDiagnostic()> err,
                               int64_t chunks) {
  return verifyChunks("zb_h1", chunks, err);
}
LogicalResult ZbH1Attr::verifyShape(int64_t S, int64_t B, int64_t W,
                                    function_ref<InFlightDiagnostic()> err) const {
  if (failed(verifyLoopPlacement("zb_h1", getChunks(), S, W, err)))
    return failure();
  if (B % torchRounds(B, W) != 0)
    return err() << "zb_h1 needs B (" << B
                 << ") to be a multiple of max(1, B / W) = " << torchRounds(B, W)
                 << " rounds, as torch does";
  return success();
}
AffineMap ZbH1Attr::getComputeMap(int64_t, int64_t, int64_t W) const {
  Dims x(getContext());
  return x.map(x.s % W);
}
AffineMap ZbH1Attr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy ZbH1Attr::getDefaultPriority() const {
  return PriorityPolicy::ZeroBubbleH1;
}
int64_t ZbH1Attr::getMicrobatchGroup(int64_t, int64_t B, int64_t W) const {
  return B / torchRounds(B, W);
}

LogicalResult ZbH2Attr::verifyShape(int64_t S, int64_t, int64_t W,
                                    function_ref<InFlightDiagnostic()> err) const {
  if (S != W)
    return err() << "zb_h2 runs one stage per worker: needs S = W, got S = "
                 << S << ", W = " << W;
  return success();
}
AffineMap ZbH2Attr::getComputeMap(int64_t, int64_t, int64_t) const {
  Dims x(getContext());
  return x.map(x.s);
}
AffineMap ZbH2Attr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy ZbH2Attr::getDefaultPriority() const {
  return PriorityPolicy::ZeroBubbleH2;
}

LogicalResult ZbvAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                   function_ref<InFlightDiagnostic()> err) const {
  if (S != 2 * W)
    return err() << "zbv needs S = 2W stages (two per worker, in a V), got S = "
                 << S << ", W = " << W;
  return success();
}
// The V as an affine map over s in [0, 2W): s - [s >= W] - 2 relu(s - W),
// with relu(s - W) = sum over k in (W, 2W) of [s >= k] and
// [s >= k] = (s - k + 2W) floordiv 2W (affine maps have no min or abs).
static AffineMap vPlacement(MLIRContext *ctx, int64_t W) {
  Dims x(ctx);
  AffineExpr worker = x.s - x.s.floorDiv(W);
  for (int64_t k = W + 1; k < 2 * W; ++k)
    worker = worker - 2 * (x.s - k + 2 * W).floorDiv(2 * W);
  return x.map(worker);
}
AffineMap ZbvAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  return vPlacement(getContext(), W);
}
AffineMap ZbvAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy ZbvAttr::getDefaultPriority() const {
  return PriorityPolicy::ZeroBubbleV;
}

static LogicalResult verifyV(StringRef strategy, int64_t S, int64_t W,
                             function_ref<InFlightDiagnostic()> err) {
  if (S != 2 * W)
    return err() << strategy
                 << " needs S = 2W stages (two per worker, in a V), got S = "
                 << S << ", W = " << W;
  return success();
}
LogicalResult VMinAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                    function_ref<InFlightDiagnostic()> err) const {
  return verifyV("v_min", S, W, err);
}
AffineMap VMinAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  return vPlacement(getContext(), W);
}
AffineMap VMinAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy VMinAttr::getDefaultPriority() const {
  return PriorityPolicy::VMin;
}
LogicalResult VHalfAttr::verifyShape(int64_t S, int64_t, int64_t W,
                                     function_ref<InFlightDiagnostic()> err) const {
  return verifyV("v_half", S, W, err);
}
AffineMap VHalfAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  return vPlacement(getContext(), W);
}
AffineMap VHalfAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy VHalfAttr::getDefaultPriority() const {
  return PriorityPolicy::VHalf;
}

LogicalResult DualPipeVAttr::verifyShape(int64_t S, int64_t B, int64_t W,
                                         function_ref<InFlightDiagnostic()> err) const {
  if (S != 2 * W)
    return err() << "dualpipev needs S = 2W stages (two per worker, in a V), "
                    "got S = "
                 << S << ", W = " << W;
  if (B < 2 * W)
    return err() << "dualpipev needs B >= 2W microbatches, got B = " << B
                 << ", W = " << W;
  return success();
}
AffineMap DualPipeVAttr::getComputeMap(int64_t, int64_t, int64_t W) const {
  return vPlacement(getContext(), W);
}
AffineMap DualPipeVAttr::getWeightsMap(int64_t S, int64_t B, int64_t W) const {
  return getComputeMap(S, B, W);
}
PriorityPolicy DualPipeVAttr::getDefaultPriority() const {
  return PriorityPolicy::DualPipeV;
}

//===----------------------------------------------------------------------===//
// Scheme resolution and evaluation
//===----------------------------------------------------------------------===//

/// Whether every `mod`, `floordiv` and `ceildiv` in `map` is by a positive
/// constant (what evaluation without symbols can compute).
static bool dividesByPositiveConstants(AffineMap map) {
  for (AffineExpr result : map.getResults()) {
    WalkResult walk = result.walk([&](AffineExpr e) {
      auto bin = dyn_cast<AffineBinaryOpExpr>(e);
      if (!bin || bin.getKind() == AffineExprKind::Add ||
          bin.getKind() == AffineExprKind::Mul)
        return WalkResult::advance();
      auto rhs = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (rhs && rhs.getValue() > 0)
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return false;
  }
  return true;
}

/// Every result of `map` is evaluated within 64 bits over the jobs' domain:
/// s < S, b < B, d < 4 (the directions), p < 3S (the sweep positions).
static LogicalResult
verifyEvaluatedIn64Bits(AffineMap map, StringRef role, int64_t S, int64_t B,
                        function_ref<InFlightDiagnostic()> emitError) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  IntRange domain[] = {{0, S - 1},
                         {0, B - 1},
                         {0, 3},
                         {0, S > kMax / 3 ? kMax : 3 * S - 1}};
  for (auto [i, result] : llvm::enumerate(map.getResults()))
    if (!boundAffineExpr(result, domain))
      return emitError() << role << " map result " << i
                         << " overflows 64-bit arithmetic for some job of "
                         << S << " stages x " << B << " microbatches, got "
                         << AffineMapAttr::get(map);
  return success();
}

LogicalResult pipesched::sched::verifyPlacementMap(
    AffineMap map, StringRef role, int64_t S, int64_t B,
    function_ref<InFlightDiagnostic()> emitError) {
  if (map.getNumDims() != 3 || map.getNumSymbols() != 0 ||
      map.getNumResults() != 1)
    return emitError() << role
                       << " map must map (s, b, d) to one worker, got "
                       << AffineMapAttr::get(map);
  if (!dividesByPositiveConstants(map))
    return emitError() << role
                       << " map may divide only by positive constants, got "
                       << AffineMapAttr::get(map);
  return verifyEvaluatedIn64Bits(map, role, S, B, emitError);
}

LogicalResult pipesched::sched::verifyPriorityKey(
    AffineMap map, int64_t S, int64_t B,
    function_ref<InFlightDiagnostic()> emitError) {
  if ((map.getNumDims() != 3 && map.getNumDims() != 4) ||
      map.getNumSymbols() != 0 || map.getNumResults() == 0)
    return emitError() << "priority key must map (s, b, d) or (s, b, d, p) "
                          "to one or more integers, got "
                       << AffineMapAttr::get(map);
  if (!dividesByPositiveConstants(map))
    return emitError() << "priority key may divide only by positive "
                          "constants, got "
                       << AffineMapAttr::get(map);
  return verifyEvaluatedIn64Bits(map, "priority key", S, B, emitError);
}

FailureOr<Scheme> pipesched::sched::resolveScheme(StepOp step) {
  int64_t S = step.getStages(), B = step.getMicrobatches(),
          W = step.getWorkers();
  Scheme scheme;
  if (auto strategy = step.getStrategyAttr()) {
    scheme.compute = strategy.getComputeMap(S, B, W);
    scheme.weights = strategy.getWeightsMap(S, B, W);
  }
  if (auto map = step.getComputeMapAttr())
    scheme.compute = map.getValue();
  if (auto map = step.getWeightsMapAttr())
    scheme.weights = map.getValue();
  if (!scheme.compute) {
    step.emitOpError("has no placement: give a strategy or a compute map");
    return failure();
  }
  if (!scheme.weights)
    scheme.weights = scheme.compute;
  return scheme;
}

namespace {
/// Evaluates an affine expression at constant dims with affine semantics
/// (`mod` is non-negative, `floordiv` rounds down).
struct PlacementEvaluator
    : AffineExprVisitor<PlacementEvaluator, int64_t> {
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t visitAddExpr(AffineBinaryOpExpr e) {
    return visit(e.getLHS()) + visit(e.getRHS());
  }
  int64_t visitMulExpr(AffineBinaryOpExpr e) {
    return visit(e.getLHS()) * visit(e.getRHS());
  }
  int64_t visitModExpr(AffineBinaryOpExpr e) {
    return llvm::mod(visit(e.getLHS()), visit(e.getRHS()));
  }
  int64_t visitFloorDivExpr(AffineBinaryOpExpr e) {
    return llvm::divideFloorSigned(visit(e.getLHS()), visit(e.getRHS()));
  }
  int64_t visitCeilDivExpr(AffineBinaryOpExpr e) {
    return llvm::divideCeilSigned(visit(e.getLHS()), visit(e.getRHS()));
  }
  int64_t visitConstantExpr(AffineConstantExpr e) { return e.getValue(); }
  int64_t visitDimExpr(AffineDimExpr e) { return dims[e.getPosition()]; }
  int64_t visitSymbolExpr(AffineSymbolExpr) { return 0; }
};
} // namespace

int64_t pipesched::sched::evaluatePlacement(AffineMap map, int64_t s,
                                            int64_t b, Direction d) {
  PlacementEvaluator eval;
  eval.dims[0] = s;
  eval.dims[1] = b;
  eval.dims[2] = static_cast<int64_t>(d);
  return eval.visit(map.getResult(0));
}

PlacementTable::PlacementTable(AffineMap map, int64_t numStages) : map(map) {
  if (map.getResult(0).isFunctionOfDim(1))
    return; // reads the microbatch: evaluated per job
  table.resize(size_t(numStages * kDirections));
  for (int64_t s = 0; s < numStages; ++s)
    for (int64_t d = 0; d < kDirections; ++d)
      table[size_t(s * kDirections + d)] =
          evaluatePlacement(map, s, /*b=*/0, Direction(d));
}

//===----------------------------------------------------------------------===//
// Priorities
//===----------------------------------------------------------------------===//

AffineMap pipesched::sched::getPolicyKey(PriorityPolicy policy,
                                         MLIRContext *ctx) {
  AffineExpr b = getAffineDimExpr(1, ctx), d = getAffineDimExpr(2, ctx),
             p = getAffineDimExpr(3, ctx);
  // 0 for a forward, 1 for either half of a backward or a scan job.
  AffineExpr isBackward = (d + 2).floorDiv(3);
  auto key = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(4, 0, results, ctx);
  };
  switch (policy) {
  case PriorityPolicy::FillDrain:
    return key({isBackward, b, p});
  case PriorityPolicy::BackwardFirst:
    return key({1 - isBackward, b, p});
  case PriorityPolicy::DepthFirst:
    return key({b, p});
  case PriorityPolicy::BreadthFirst:
    return key({p, b});
  case PriorityPolicy::Interleaved:
  case PriorityPolicy::LoopedBFS:
  case PriorityPolicy::ZeroBubbleH1:
  case PriorityPolicy::ZeroBubbleV:
  case PriorityPolicy::DualPipeV:
  case PriorityPolicy::ZeroBubbleH2:
  case PriorityPolicy::VMin:
  case PriorityPolicy::VHalf:
    return {};
  }
  llvm_unreachable("unknown priority policy");
}

std::optional<pipesched::scheduling::StaticOrder>
pipesched::sched::getStaticOrder(PriorityPolicy policy) {
  switch (policy) {
  case PriorityPolicy::Interleaved:
    return pipesched::scheduling::StaticOrder::Interleaved;
  case PriorityPolicy::LoopedBFS:
    return pipesched::scheduling::StaticOrder::LoopedBFS;
  case PriorityPolicy::ZeroBubbleH1:
    return pipesched::scheduling::StaticOrder::ZeroBubbleH1;
  case PriorityPolicy::ZeroBubbleV:
    return pipesched::scheduling::StaticOrder::ZeroBubbleV;
  case PriorityPolicy::DualPipeV:
    return pipesched::scheduling::StaticOrder::DualPipeV;
  case PriorityPolicy::ZeroBubbleH2:
    return pipesched::scheduling::StaticOrder::ZeroBubbleH2;
  case PriorityPolicy::VMin:
    return pipesched::scheduling::StaticOrder::VMin;
  case PriorityPolicy::VHalf:
    return pipesched::scheduling::StaticOrder::VHalf;
  default:
    return std::nullopt;
  }
}

ResolvedPriority pipesched::sched::resolvePriority(StepOp step) {
  StrategyAttrInterface strategy = step.getStrategyAttr();
  ResolvedPriority resolved;
  if (strategy)
    resolved.group = strategy.getMicrobatchGroup(
        step.getStages(), step.getMicrobatches(), step.getWorkers());
  Attribute priority = step.getPriorityAttr();
  if (auto key = dyn_cast_if_present<AffineMapAttr>(priority)) {
    resolved.key = key.getValue();
    return resolved;
  }
  PriorityPolicy policy = PriorityPolicy::FillDrain;
  if (auto named = dyn_cast_if_present<PriorityPolicyAttr>(priority))
    policy = named.getValue();
  else if (strategy)
    policy = strategy.getDefaultPriority();
  resolved.policy = policy;
  resolved.order = getStaticOrder(policy);
  if (!resolved.order)
    resolved.key = getPolicyKey(policy, step.getContext());
  return resolved;
}

void pipesched::sched::evaluatePriorityKey(AffineMap key, int64_t S,
                                           int64_t s, int64_t b, Direction d,
                                           SmallVectorImpl<int64_t> &out) {
  PlacementEvaluator eval;
  eval.dims[0] = s;
  eval.dims[1] = b;
  eval.dims[2] = static_cast<int64_t>(d);
  eval.dims[3] = pipesched::scheduling::sweepPosition(S, s, toSchedulingDirection(d));
  for (AffineExpr result : key.getResults())
    out.push_back(eval.visit(result));
}
