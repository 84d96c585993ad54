#include "measure/timeline.h"

#include "comm/agreement.h"
#include "comm/gather.h"
#include "measure/measured_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace pipesched::runtime {

RankSummary summarize(const Program &program, int rank,
                      const std::vector<OpTiming> &timeline, int steps) {
  const RankProgram &rp = program.ranks[rank];
  RankSummary s;
  for (const OpTiming &t : timeline) {
    double ms = double(t.endNs - t.startNs) / 1e6 / steps;
    OpKind k = rp.ops[t.op].kind;
    if (isCompute(k))
      s.computeMs += ms;
    else if (isPointToPoint(k) || k == OpKind::Group)
      s.transferMs += ms;
    else if (isCollective(k))
      s.collectiveMs += ms;
    else
      s.otherMs += ms;
  }
  s.ops = double(rp.ops.size());
  return s;
}

namespace {
std::string bytes(double b) {
  char buf[32];
  if (b >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (b >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}
} // namespace

void printSummaries(MPI_Comm world, const RankSummary &mine, double timeout) {
  int rank, size;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  constexpr int N = 7;
  double local[N] = {mine.computeMs,       mine.transferMs,       mine.collectiveMs,
                     mine.otherMs,         mine.peakTensorBytes,  mine.peakFetchedBytes,
                     mine.ops};
  std::vector<double> all(rank == 0 ? size_t(size) * N : 0);
  MPI_Request request;
  MPI_Igather(local, N, MPI_DOUBLE, all.data(), N, MPI_DOUBLE, 0, world, &request);
  waitOrAbort(&request, 1, rank, timeout, "the gathering of the per-rank summaries");
  if (rank != 0)
    return;
  for (int r = 0; r < size; ++r) {
    const double *x = &all[size_t(r) * N];
    std::printf("rank %d: per step %.3f ms compute, %.3f ms transfers, %.3f ms "
                "collectives, %.3f ms other; %.0f ops; peak tensors %s, peak "
                "fetched weights %s\n",
                r, x[0], x[1], x[2], x[3], x[6], bytes(x[4]).c_str(),
                bytes(x[5]).c_str());
  }
}

std::string writeTimeline(MPI_Comm world, const Program &program, int rank,
                          const std::vector<OpTiming> &timeline,
                          const std::string &path, double timeout) {
  const RankProgram &rp = program.ranks[rank];
  std::string rows;
  char line[160];
  for (const OpTiming &t : timeline) {
    const Op &op = rp.ops[t.op];
    const std::string_view kind = opName(op.kind);
    std::snprintf(line, sizeof line, "%d,%d,%d,%.*s,%d,%d,%.3f,%.3f,", rank, t.step,
                  t.op, int(kind.size()), kind.data(), op.stage, op.microbatch,
                  double(t.startNs) / 1e3, double(t.endNs) / 1e3);
    rows += line;
    rows += "\"" + describe(program, rp, op) + "\"\n";
  }
  std::vector<std::string> parts =
      gatherToRoot(world, rows, rank, timeout, "the gathering of the timeline");
  if (rank != 0)
    return "";
  std::ofstream out(path);
  out << "rank,step,op,kind,stage,microbatch,start_us,end_us,description\n";
  for (const std::string &part : parts)
    out << part;
  out.close();
  if (!out)
    return "cannot write the timeline to " + path + ": " + std::strerror(errno);
  return "";
}

std::string writeTrace(MPI_Comm world, const Program &program, int rank,
                       const std::vector<OpTiming> &timeline, const std::string &path,
                       double timeout) {
  std::vector<std::string> parts =
      gatherToRoot(world, packTraceOps(traceOps(program, rank, timeline)), rank, timeout,
                   "the gathering of the trace");
  if (rank != 0)
    return "";
  std::vector<std::vector<TraceOp>> perRank;
  for (const std::string &part : parts)
    perRank.push_back(unpackTraceOps(part));
  std::ofstream out(path);
  out << measuredTraceJson(perRank);
  out.close();
  if (!out)
    return "cannot write the trace to " + path + ": " + std::strerror(errno);
  return "";
}

} // namespace pipesched::runtime
