// The measured timeline as a Chrome trace (--trace FILE), without MPI: what
// each rank reports of its ops, packed for the gathering, and the document
// rank 0 writes with the shared TraceWriter
// (include/pipesched/Program/TraceEvents.h), so that it opens next to the
// compiler's simulated trace with the same tracks and names.
#pragma once

#include "exec/backend.h"
#include "program/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipesched::runtime {

// One executed op as the trace shows it. Arguments < 0 are absent.
struct TraceOp {
  OpKind kind = OpKind::Forward;
  int32_t step = 0;
  int64_t startNs = 0, endNs = 0; // since the start of the step on its rank
  int64_t stage = -1, microbatch = -1, bytes = -1, peer = -1, root = -1;
  std::string name;
};

// The event name of an op, torch-style for compute ops: "<stage><letter>
// <microbatch>" with F forward, B backward (I when the backward is split),
// W backward_weight, G loss_grad, J jacobian, C combine ("1F0", "3G0");
// else the op and its peer or stage ("send to 1", "recv from 0",
// "fetch_weights 2", "allreduce_grad 3", "group (send to 1; recv from 1)").
std::string traceName(const Program &program, const RankProgram &rp, const Op &op);

// The ops of `timeline` (this rank's program), in order.
std::vector<TraceOp> traceOps(const Program &program, int rank,
                              const std::vector<OpTiming> &timeline);

// A rank's ops as bytes for the gathering, and back (throws
// std::runtime_error on a malformed buffer).
std::string packTraceOps(const std::vector<TraceOp> &ops);
std::vector<TraceOp> unpackTraceOps(const std::string &bytes);

// The trace of every rank's ops (perRank[r]: rank r's), steps laid one
// after another: step t starts where the longest rank's step t-1 ended
// (times are per rank since the start of its step, and ranks start a step
// together, after a barrier). Compute ops on the compute track, the rest
// on the communication track; every event carries its step (1-based).
std::string measuredTraceJson(const std::vector<std::vector<TraceOp>> &perRank);

} // namespace pipesched::runtime
