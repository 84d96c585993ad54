// The cpu backend's LinkProbe (link_probe.h): host memory over MPI, on a
// communicator of its own, as the cpu backend's transfers and collectives.
#pragma once

#include "exec/link_probe.h"

#include <mpi.h>

#include <memory>

namespace pipesched::runtime {

// Collective over `world` (the communicator's duplication, bounded by
// `timeout` like every wait of the probe).
std::unique_ptr<LinkProbe> makeHostLinkProbe(MPI_Comm world, int rank, double timeout);

} // namespace pipesched::runtime
