// How the ranks agree, before the run, on whether one of them failed
// (bad options, an invalid program, no GPU, a model library that does not
// load), so that all exit together with one message. Each agreement is a
// non-blocking reduction polled against --timeout: a rank stuck on the way
// (a huge file, a hung file system) ends the job with a message instead of
// leaving the others blocked forever.
//
// waitOrAbort bounds the control plane's waits after the steps the same way
// (the summaries, the timeline, --verify's gathering, the last agreement):
// a rank that stalls or dies there ends the job instead of hanging it.
#pragma once

#include "cli/options.h"

#include <mpi.h>

#include <string>

namespace pipesched::runtime {

// The lowest failing rank prints its message (a problem every rank finds is
// reported once); true if any rank failed. `stage` names what the ranks
// agree on, for the timeout message ("load the program").
bool anyRankFailed(const std::string &error, int rank, int size, double timeout,
                   const char *stage);

// Every rank with a problem prints it (each may see another one, e.g. its
// own node without a GPU); true if any rank had one.
bool everyRankReports(const std::string &error, int rank, double timeout,
                      const char *stage);

// Whether every rank holds the same `value` (one reduction of its minimum
// and maximum, bounded by `timeout` like the others); `lo` and `hi` receive
// them. The per-rank layout's index CRC-32: every rank read the same index.
bool sameOnEveryRank(long long value, int rank, double timeout, const char *stage,
                     long long &lo, long long &hi);

// Whether every rank was given the same shared options (options.h,
// sharedOptions): rank 0's are broadcast, each rank compares its own, and
// the lowest rank that differs names the first option that does, with
// both values ("--lr differs between ranks: 0.1 on rank 0, 0.5 on rank
// 2"). One broadcast of a fixed size and one reduction, each bounded by
// the rank's --timeout.
bool sameOptions(const Options &o, int rank, int size);

// Waits for `count` requests, polling against `timeout` seconds; on expiry
// prints "pipeline-run: rank R timed out after T s in WHAT" and ends the
// job (MPI_Abort, status 2).
void waitOrAbort(MPI_Request *requests, int count, int rank, double timeout,
                 const std::string &what);

} // namespace pipesched::runtime
