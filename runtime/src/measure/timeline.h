// What the run measured: a per-rank summary printed by rank 0, and the
// per-op timeline, gathered to rank 0 and written as CSV (--timeline FILE)
// or as a Chrome trace (--trace FILE).
#pragma once

#include "exec/executor.h"
#include "program/program.h"

#include <mpi.h>

#include <string>
#include <vector>

namespace pipesched::runtime {

struct RankSummary {
  double computeMs = 0, transferMs = 0, collectiveMs = 0, otherMs = 0; // per step
  double peakTensorBytes = 0, peakFetchedBytes = 0, ops = 0;
};

RankSummary summarize(const Program &program, int rank,
                      const std::vector<OpTiming> &timeline, int steps);

// Collective over `world`; rank 0 prints one line per rank. Both
// collectives wait at most `timeout` seconds, else end the job naming the
// rank and the gathering (agreement.h, waitOrAbort).
void printSummaries(MPI_Comm world, const RankSummary &mine, double timeout);

// Collective over `world`: rank 0 writes every rank's ops as CSV rows
// rank,step,op,kind,stage,microbatch,start_us,end_us,description with times
// relative to the start of the step on that rank (all ranks start a step
// together, after a barrier). Returns an error message on rank 0, or "".
std::string writeTimeline(MPI_Comm world, const Program &program, int rank,
                          const std::vector<OpTiming> &timeline,
                          const std::string &path, double timeout);

// Collective over `world`: rank 0 writes every rank's ops as a Chrome trace
// (measured_trace.h). Returns an error message on rank 0, or "".
std::string writeTrace(MPI_Comm world, const Program &program, int rank,
                       const std::vector<OpTiming> &timeline, const std::string &path,
                       double timeout);

} // namespace pipesched::runtime
