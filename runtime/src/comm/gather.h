// Gathers a byte string from every rank to rank 0, with a deadline: the
// control plane's one way to collect what each rank measured (the
// timeline's rows, the trace's ops, --profile's samples).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace pipesched::runtime {

// Collective over `world`: rank 0 gets every rank's `mine`, in rank order;
// the others get nothing. Each wait is bounded by `timeout` seconds, else
// the job ends naming `what` (agreement.h, waitOrAbort).
std::vector<std::string> gatherToRoot(MPI_Comm world, const std::string &mine, int rank,
                                      double timeout, const std::string &what);

} // namespace pipesched::runtime
