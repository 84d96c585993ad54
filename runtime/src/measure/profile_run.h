// --profile FILE: after the steps, every rank's compute timings are
// gathered to rank 0, the ranks time a ring of transfers at several sizes
// and an all-reduce through the backend's LinkProbe (link_probe.h: the path
// its own transfers take), and rank 0 writes the cost file (profile.h,
// Costs.h).
#pragma once

#include "exec/backend.h"
#include "measure/profile.h"
#include "program/program.h"

#include <mpi.h>

#include <string>
#include <vector>

namespace pipesched::runtime {

// Collective over `world`. Every wait is bounded by `timeout` seconds
// (agreement.h, waitOrAbort). Returns an error message on rank 0 (the file
// not writable, a stage without samples), or "".
std::string writeProfile(MPI_Comm world, const Program &program, int rank,
                         const std::vector<OpTiming> &timeline, const ProfileContext &context,
                         Backend &backend, const std::string &path, double timeout);

} // namespace pipesched::runtime
