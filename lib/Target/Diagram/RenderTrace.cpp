//===- RenderTrace.cpp - a schedule as a Chrome trace ---------------------===//
//
// The simulated timeline in the format `pipeline-run --trace` writes the
// measured one in (TraceEvents.h): jobs on each rank's compute track,
// transfers and weight fetches on both ends' communication tracks.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Diagram.h"

#include "pipesched/Program/TraceEvents.h"

using namespace pipesched::diagram;
namespace trace = pipesched::trace;

static const char *categoryOf(char kind) {
  switch (kind) {
  case 'F':
    return "forward";
  case 'B':
  case 'I':
    return "backward";
  case 'W':
    return "backward_weight";
  case 'G':
    return "loss_grad";
  case 'J':
    return "jacobian";
  default:
    return "combine";
  }
}

void pipesched::diagram::renderTrace(const Diagram &d, llvm::raw_ostream &os) {
  std::string out;
  trace::TraceWriter writer(out, "simulated", d.tickNs ? "ns" : "tick");
  // A tick is a microsecond unless the cost gives it a length.
  double us = d.tickNs ? double(d.tickNs) / 1e3 : 1.0;
  for (int32_t w = 0; w < d.workers; ++w)
    writer.rank(w);
  for (const Job &j : d.jobs) {
    if (j.partOfPair)
      continue;
    writer.slice(j.worker, trace::kCompute, j.label, categoryOf(j.kind),
                 double(j.start) * us, double(j.end - j.start) * us,
                 {{"stage", j.stage}, {"microbatch", j.microbatch}});
  }
  // Named as pipeline-run --trace names the ops that move them: "send to
  // 1", "recv from 0", "send_weights 2", "fetch_weights 2".
  for (const Mark &m : d.marks) {
    bool weights = m.kind == Mark::Kind::Weights;
    double start = double(m.sent) * us, length = double(m.arrived - m.sent) * us;
    std::string stage = std::to_string(m.stage);
    writer.slice(m.from, trace::kCommunication,
                 weights ? "send_weights " + stage : "send to " + std::to_string(m.to),
                 weights ? "send_weights" : "send", start, length,
                 {{"stage", m.stage}, {"microbatch", m.microbatch},
                  {"bytes", m.bytes}, {"peer", m.to}});
    writer.slice(m.to, trace::kCommunication,
                 weights ? "fetch_weights " + stage
                         : "recv from " + std::to_string(m.from),
                 weights ? "fetch_weights" : "recv", start, length,
                 {{"stage", m.stage}, {"microbatch", m.microbatch},
                  {"bytes", m.bytes}, {"peer", m.from}});
  }
  writer.finish();
  os << out;
}
