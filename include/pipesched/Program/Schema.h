//===- Schema.h - the per-rank program format, shared -----------*- C++ -*-===//
//
// The one description of a rank program (docs/program-format.md): the format
// name and version, the op kinds with the fields each takes, and how tensors
// are named. The compiler's writer (lib/Target/Program) and the runtime's
// loader (runtime/src/program/) both include this header; it depends on
// nothing but the C++17 standard library (no MLIR, no JSON library).
//
//===----------------------------------------------------------------------===//

#ifndef PIPESCHED_PROGRAM_SCHEMA_H
#define PIPESCHED_PROGRAM_SCHEMA_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipesched::program {

inline constexpr std::string_view kFormat = "pipesched-program";
/// Version 2: ops list the tensors they read and write; the stage graph is
/// always explicit (an empty list means independent stages, not the chain).
/// Extended without a bump by optional fields a writer leaves out when
/// unused (`tied` and its `tied_grad` op among them): a reader that does
/// not know one refuses it as an unknown field or op.
inline constexpr int64_t kVersion = 2;

/// The fields of the document's top level, in the order the writer emits.
namespace top {
inline constexpr std::string_view kFormatField = "format", kVersion = "version",
                                  kStages = "stages",
                                  kMicrobatches = "microbatches",
                                  kWorkers = "workers",
                                  kStageGraph = "stage_graph",
                                  kTied = "tied",
                                  kSplitBackward = "split_backward",
                                  kCost = "cost", kMakespan = "makespan",
                                  kReplayedMakespan = "replayed_makespan",
                                  kScanTensors = "scan_tensors",
                                  kLayers = "layers", kRanks = "ranks";
inline constexpr std::string_view kAll[] = {
    kFormatField, kVersion,  kStages,       kMicrobatches,
    kWorkers,     kStageGraph, kTied, kSplitBackward, kCost,
    kMakespan,    kReplayedMakespan, kScanTensors, kLayers, kRanks};
/// Fields a document may omit (older writers did not know them).
/// `replayed_makespan`: the programs' time replayed with rendezvous
/// transfers (the compiler's prediction), in ticks. `tied`: groups of
/// stages sharing one weight tensor, `[[0, 3], ...]` (absent: none).
/// `layers`: the model's layer count per stage (a partition,
/// docs/partition.md), one count in [1, kMaxStageLayers] per stage;
/// absent: the runtime's --layers-per-stage for every stage.
inline constexpr std::string_view kOptional[] = {kTied, kReplayedMakespan,
                                                 kScanTensors, kLayers};
} // namespace top
/// The most layers a stage may have (pipeline-run's --layers-per-stage
/// takes as many).
inline constexpr int64_t kMaxStageLayers = int64_t(1) << 16;

/// The fields of `cost` and of each `ranks[i]`.
namespace cost {
inline constexpr std::string_view kFwd = "fwd", kBwd = "bwd", kBwdW = "bwd_w",
                                  kActBytes = "act_bytes",
                                  kWeightBytes = "weight_bytes",
                                  kTickNs = "tick_ns", kTransfer = "transfer";
inline constexpr std::string_view kAll[] = {kFwd,         kBwd,    kBwdW,
                                            kActBytes,    kWeightBytes,
                                            kTickNs,      kTransfer};
// The cost's link and optimizer figures are the compiler's business: the
// program carries their result, `replayed_makespan`.
/// Fields a document may omit: `tick_ns` (nanoseconds per tick of every
/// duration and of the makespan; absent or 0: abstract ticks) and
/// `transfer` (ticks to move one tensor between workers; absent: 0).
inline constexpr std::string_view kOptional[] = {kTickNs, kTransfer};
} // namespace cost
namespace rank {
inline constexpr std::string_view kRank = "rank", kOwns = "owns", kOps = "ops";
inline constexpr std::string_view kAll[] = {kRank, kOwns, kOps};
} // namespace rank

/// Every field an op may carry, as bits of a mask.
enum Field : uint32_t {
  kOp = 1u << 0,         ///< the op's name
  kStage = 1u << 1,      ///< its stage
  kMicrobatch = 1u << 2, ///< its microbatch (compute ops)
  kStart = 1u << 3,      ///< simulated start (compute ops, optional)
  kEnd = 1u << 4,        ///< simulated end (compute ops, optional)
  kReads = 1u << 5,      ///< tensor ids read, in operand order
  kWrites = 1u << 6,     ///< tensor ids written
  kPeer = 1u << 7,       ///< the other rank of a point-to-point op
  kTag = 1u << 8,        ///< unique per message, equal on both ends
  kBytes = 1u << 9,      ///< payload size from the cost model
  kRoot = 1u << 10,      ///< the owner a reduce_grad sums onto
  kMembers = 1u << 11,   ///< sorted ranks of a collective
  kOps = 1u << 12,       ///< the ops of a group
  kProduct = 1u << 13,   ///< "jv" or "jj": what a combine makes
  kTie = 1u << 14,       ///< a tied_grad's group: an index into `tied`
};
inline constexpr int kNumFields = 15;
inline constexpr std::string_view kFieldNames[kNumFields] = {
    "op",   "stage", "microbatch", "start", "end",     "reads", "writes",
    "peer", "tag",   "bytes",      "root",  "members", "ops",   "product",
    "tie"};

constexpr std::string_view fieldName(Field f) {
  for (int i = 0; i < kNumFields; ++i)
    if (f == (1u << i))
      return kFieldNames[i];
  return "?";
}

enum class OpKind : uint8_t {
  Forward,
  Backward,
  BackwardWeight,
  Send,
  Recv,
  SendWeights,
  FetchWeights,
  ReleaseWeights,
  AllreduceGrad,
  ReduceGrad,
  OptimizerStep,
  Group,
  LossGrad,
  Jacobian,
  Combine,
  TiedGrad,
};
inline constexpr int kNumOpKinds = 16;

/// An op kind: its name, the fields it requires and those it may omit.
struct OpSchema {
  OpKind kind;
  std::string_view name;
  uint32_t required;
  uint32_t optional = 0;
  constexpr uint32_t allowed() const { return required | optional; }
};

/// Reads and writes of compute ops, by operand role (S stages, the stage
/// graph's edges in order):
///  - forward (s, b): reads the outputs of the forwards of s's predecessors
///    on b, in edge order (none: the microbatch's data); writes its output.
///  - backward (s, b): reads first the gradients of s's successors'
///    backwards on b, in edge order (at a stage without successors: its own
///    forward's output, from which the loss gradient is computed), then the
///    activations its forward read; writes the gradient with respect to its
///    input (only when s has predecessors).
///  - backward_weight (s, b): reads what its backward read; writes nothing.
///    In a scanned backward (no backward op), it reads the gradient of its
///    stage's output, a scan tensor, then the activations its forward read.
///  - loss_grad (S-1, b): reads the last stage's output; writes G, a scan
///    vector.
///  - jacobian (s, b): reads stage s's input activation; writes J_s, a scan
///    matrix.
///  - combine: reads lhs then rhs (rhs a matrix) and writes rhs * lhs: a
///    vector when `product` is "jv" (lhs a vector), else a matrix.
///  - send reads the tensor it sends, recv writes the tensor it receives.
inline constexpr OpSchema kOpSchemas[kNumOpKinds] = {
    {OpKind::Forward, "forward", kOp | kStage | kMicrobatch | kReads | kWrites,
     kStart | kEnd},
    {OpKind::Backward, "backward", kOp | kStage | kMicrobatch | kReads | kWrites,
     kStart | kEnd},
    {OpKind::BackwardWeight, "backward_weight",
     kOp | kStage | kMicrobatch | kReads | kWrites, kStart | kEnd},
    {OpKind::Send, "send", kOp | kReads | kPeer | kTag | kBytes},
    {OpKind::Recv, "recv", kOp | kWrites | kPeer | kTag | kBytes},
    {OpKind::SendWeights, "send_weights", kOp | kStage | kPeer | kTag | kBytes},
    {OpKind::FetchWeights, "fetch_weights", kOp | kStage | kPeer | kTag | kBytes},
    {OpKind::ReleaseWeights, "release_weights", kOp | kStage},
    {OpKind::AllreduceGrad, "allreduce_grad", kOp | kStage | kMembers | kBytes},
    {OpKind::ReduceGrad, "reduce_grad",
     kOp | kStage | kRoot | kMembers | kBytes},
    {OpKind::OptimizerStep, "optimizer_step", kOp | kStage},
    {OpKind::Group, "group", kOp | kOps},
    {OpKind::LossGrad, "loss_grad",
     kOp | kStage | kMicrobatch | kReads | kWrites, kStart | kEnd},
    {OpKind::Jacobian, "jacobian",
     kOp | kStage | kMicrobatch | kReads | kWrites, kStart | kEnd},
    {OpKind::Combine, "combine",
     kOp | kStage | kMicrobatch | kReads | kWrites | kProduct, kStart | kEnd},
    {OpKind::TiedGrad, "tied_grad", kOp | kTie | kMembers | kBytes},
};

constexpr const OpSchema &opSchema(OpKind kind) {
  return kOpSchemas[static_cast<int>(kind)];
}
constexpr std::string_view opName(OpKind kind) { return opSchema(kind).name; }

inline std::optional<OpKind> opKindNamed(std::string_view name) {
  for (const OpSchema &s : kOpSchemas)
    if (s.name == name)
      return s.kind;
  return std::nullopt;
}

/// The jobs of a scanned backward (BPPSA).
constexpr bool isScan(OpKind k) {
  return k == OpKind::LossGrad || k == OpKind::Jacobian || k == OpKind::Combine;
}
constexpr bool isCompute(OpKind k) {
  return k == OpKind::Forward || k == OpKind::Backward ||
         k == OpKind::BackwardWeight || isScan(k);
}
/// Ops that may appear in a group (and, alone, are a group of one).
constexpr bool isPointToPoint(OpKind k) {
  return k == OpKind::Send || k == OpKind::Recv || k == OpKind::SendWeights ||
         k == OpKind::FetchWeights;
}
/// The sending half of a point-to-point pair.
constexpr bool isOutgoing(OpKind k) {
  return k == OpKind::Send || k == OpKind::SendWeights;
}
/// Ops that every member of `members` calls (a tied_grad of one member
/// sums locally).
constexpr bool isCollective(OpKind k) {
  return k == OpKind::AllreduceGrad || k == OpKind::ReduceGrad ||
         k == OpKind::TiedGrad;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// A tensor of a step is the output of one job: the activation a forward
/// makes or the gradient a backward makes. Its id is the same on every rank
/// (a send and its receive name the same tensor):
///   id = 2 * (stage * microbatches + microbatch) + (0 for act, 1 for grad).
/// A scanned backward adds `scan_tensors` more, the outputs of its scan jobs
/// (numbered by the writer, in program order), after those:
///   id = 2 * stages * microbatches + k, 0 <= k < scan_tensors.
enum class TensorKind : uint8_t { Act = 0, Grad = 1, Scan = 2 };

constexpr std::string_view tensorKindName(TensorKind k) {
  return k == TensorKind::Act ? "act" : k == TensorKind::Grad ? "grad" : "scan";
}

struct TensorRef {
  TensorKind kind;
  int64_t stage, microbatch;
};

/// The number of tensor ids of a step (valid ids are [0, count)); the caller
/// bounds stages, microbatches and scan tensors so that this does not
/// overflow.
constexpr int64_t tensorCount(int64_t stages, int64_t microbatches,
                              int64_t scanTensors = 0) {
  return 2 * stages * microbatches + scanTensors;
}
constexpr int64_t tensorId(TensorKind kind, int64_t stage, int64_t microbatch,
                           int64_t microbatches) {
  return 2 * (stage * microbatches + microbatch) + static_cast<int64_t>(kind);
}
/// What a scan tensor holds: a vector (rows x width, like a gradient) or a
/// matrix (a product of stage Jacobians, one width x width block per row).
/// A combine's `product` names what it makes: "jv" a vector, "jj" a matrix.
enum class ScanValue : uint8_t { None, Vector, Matrix };
constexpr std::string_view productName(ScanValue v) {
  return v == ScanValue::Vector ? "jv" : v == ScanValue::Matrix ? "jj" : "?";
}

/// The act or grad tensor `id` (below tensorCount(stages, microbatches)).
constexpr TensorRef tensorOf(int64_t id, int64_t microbatches) {
  int64_t pair = id / 2;
  return {static_cast<TensorKind>(id % 2), pair / microbatches,
          pair % microbatches};
}

//===----------------------------------------------------------------------===//
// Layouts and encodings (docs/program-format.md, "Big programs")
//===----------------------------------------------------------------------===//

/// A program is one document (the default), or a directory in the
/// per-rank layout: an index holding every top-level field but `ranks`,
/// plus `layout`, `rank_files` and `collective_groups`, and one file per
/// rank holding exactly the object `ranks[r]` of the one document. Rank r
/// reads the index and its own file only.
namespace layout {
inline constexpr std::string_view kLayout = "layout", kPerRank = "per-rank",
                                  kRankFiles = "rank_files",
                                  kCollectiveGroups = "collective_groups";
/// The fields of each `rank_files[r]`: `rank`, `owns` (as in the rank's
/// file), `file` (a plain name inside the directory), `bytes` (its exact
/// size) and `crc32` (zlib's CRC-32 of its bytes, an integer).
inline constexpr std::string_view kRank = "rank", kOwns = "owns",
                                  kFile = "file", kBytes = "bytes",
                                  kCrc32 = "crc32";
inline constexpr std::string_view kIndexStem = "index", kRankStem = "rank-";
} // namespace layout

/// Every file of a program is JSON (the readable default) or CBOR (RFC
/// 8949: the same document, smaller and faster to read). A reader tells
/// them apart by the first byte: JSON starts with `{` (or whitespace), a
/// CBOR document with a map head (0xa0..0xbb, or 0xbf when indefinite).
enum class Encoding : uint8_t { Json, Cbor };
constexpr std::string_view extension(Encoding e) {
  return e == Encoding::Json ? ".json" : ".cbor";
}
constexpr bool isCborMapHead(unsigned char byte) {
  return (byte >= 0xa0 && byte <= 0xbb) || byte == 0xbf;
}
namespace layout {
/// The index's file name in the per-rank layout: `index.json`, `index.cbor`.
inline std::string indexName(Encoding e) {
  return std::string(kIndexStem) + std::string(extension(e));
}
} // namespace layout

} // namespace pipesched::program

#endif // PIPESCHED_PROGRAM_SCHEMA_H
