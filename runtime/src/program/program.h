// The in-memory form of a per-rank program (docs/program-format.md; the
// format's names, op kinds and tensor ids come from the schema shared with
// the compiler, include/pipesched/Program/Schema.h). Plain structs without
// JSON: the loader fills them, the validator checks them across ranks, the
// executor runs one rank's ops.
#pragma once

#include "program/stage_graph.h"

#include "pipesched/Program/Schema.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

using program::OpKind;
using program::TensorKind;
using program::isCollective;
using program::isCompute;
using program::isOutgoing;
using program::isPointToPoint;
using program::opName;

// Tensor ids an op reads or writes, in operand order.
using IdList = View<int64_t>;

// One op. Fields an op kind does not use keep their defaults.
struct Op {
  OpKind kind = OpKind::Forward;
  int32_t stage = -1;      // send / recv: the stage of their tensor
  int32_t microbatch = -1; // send / recv: the microbatch of their tensor
  int32_t peer = -1;       // point-to-point
  int32_t root = -1;       // reduce_grad
  int32_t group = -1;      // collectives: index into Program::groups
  int32_t tie = -1;        // tied_grad: index into Program::ties
  int64_t tag = -1;
  int64_t bytes = 0;   // from the compiler's cost model, checked not used
  int64_t tensor = -1; // send / recv: the tensor id
  // combine: what it makes (a scan vector from a vector, or a matrix).
  program::ScanValue product = program::ScanValue::None;
  double start = 0, end = 0; // simulated times (compute ops)
  // group: its ops are RankProgram::children[first .. first + count);
  // compute: reads are RankProgram::tensorIds[first .. first + count),
  // writes the `writes` ids after them.
  uint32_t first = 0, count = 0, writes = 0;
};

struct RankProgram {
  int rank = 0;
  std::vector<int> owns;        // stages, as listed
  std::vector<int> ownsSorted;  // the same, sorted: ownsStage() in O(log)
  std::vector<Op> ops;          // top level, in program order
  std::vector<Op> children;     // the ops of groups, in order
  std::vector<int64_t> tensorIds; // compute ops' reads and writes

  bool ownsStage(int stage) const;
  const Op *childrenOf(const Op &group) const {
    return children.data() + group.first;
  }
  // The tensors an op reads / writes (none for a group: see its children).
  IdList reads(const Op &op) const;
  IdList writes(const Op &op) const;
};

struct Cost {
  std::vector<double> fwd, bwd, bwdW;
  int64_t actBytes = 0, weightBytes = 0;
  // Optional: nanoseconds per tick of every duration and of the makespan
  // (0: abstract ticks), and ticks to move one tensor between workers.
  int64_t tickNs = 0, transfer = 0;
};

struct Program {
  std::string source; // the file name, prefixed to every message
  int stages = 0, microbatches = 0, workers = 0;
  bool splitBackward = false;
  StageGraph graph;
  Cost cost;
  double makespan = 0;
  // Optional: the rank programs' time replayed by the compiler with
  // rendezvous transfers, in ticks (0: absent); the prediction to check.
  double replayedMakespan = 0;
  // A scanned backward (BPPSA): the scan tensors after the act and grad
  // ids, and what each holds (the validator fills it from the ops that
  // write them, over all ranks: a receiver sizes its buffer from it).
  int64_t scanTensors = 0;
  std::vector<program::ScanValue> scanValue;
  // Optional: the model's layer count per stage (a partition of its layers,
  // docs/partition.md); empty: --layers-per-stage for every stage.
  std::vector<int64_t> layers;
  std::vector<std::vector<int>> groups; // distinct collective groups, sorted
  // Groups of stages sharing one weight tensor (`tied`, ties.h), and per
  // stage its group (-1: none).
  std::vector<std::vector<int>> ties;
  std::vector<int> tieOf;
  std::vector<RankProgram> ranks;
  // The CRC-32 of the file every rank must have read alike: the index of
  // the per-rank layout (docs/program-format.md, "Big programs"), whose
  // CRC-32s bind the rank files, or the single document.
  uint32_t crc32 = 0;
  // The per-rank layout: the one rank whose ops were loaded (-1: every
  // rank's; the others have `owns` only).
  bool perRank = false;
  int onlyRank = -1;

  bool scanned() const { return scanTensors > 0; }
  // The first scan tensor id.
  int64_t scanBase() const { return program::tensorCount(stages, microbatches); }
  bool isScanTensor(int64_t id) const { return id >= scanBase(); }
  // Valid tensor ids are [0, tensorCount()).
  int64_t tensorCount() const {
    return program::tensorCount(stages, microbatches, scanTensors);
  }
  size_t totalOps() const;
  // Frees the ops of every rank but `rank` (validation needed them all; the
  // run needs its own, the groups and everyone's `owns`).
  void keepOpsOf(int rank);
};

// Where an op sits in the document: ranks[rank].ops[op](.ops[child]).
struct OpRef {
  int32_t rank = -1, op = -1, child = -1;
  std::string str() const;
};

// "act (s=0, b=1)", "scan tensor 3".
std::string describeTensor(const Program &program, int64_t id);
// "forward (s=1, b=0)", "recv grad (s=2, b=0) from rank 2", ...
std::string describe(const Program &program, const Op &op);
// The same, a group listing its ops: "group (send ...; recv ...)".
std::string describe(const Program &program, const RankProgram &rp, const Op &op);
std::string listString(const std::vector<int> &values);

// Whether an op's device work runs on a backend's communication stream
// (Backend::beginOp times it there and counts its commands there): the
// transfers, groups and gradient collectives. Not tied_grad, though a
// collective: its sums and copies run on the compute stream, and its
// all-reduce between them, ordered by the sum buffer's events (every member
// owns a stage of the tie, so a copy always follows the all-reduce): the
// compute stream's end is the end of all of its work.
bool runsOnCommunicationStream(OpKind kind);

} // namespace pipesched::runtime
