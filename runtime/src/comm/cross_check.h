// A run of a per-rank program refuses what --check refuses. Each rank
// loaded only the index and its own file and checked what needs its own
// ops alone (validateRank); the index's CRC-32s bind the files to one
// compile, but an index re-stamped over edited files binds them too. So
// every rank sends rank 0 the image of its ops (rank_image.h: the loaded
// form, not the file), and rank 0 validates the whole program as --check
// does: every job once, tags unique, each listed group used, sends
// matching receives, collectives agreeing, deadlock freedom.
//
// Cost: the images, O(total ops) bytes (about 100 per op), go to rank 0
// once; rank 0 holds them and the whole program's ops while it validates
// (no rank parses another's file). Every wait is bounded by --timeout.
#pragma once

#include "program/program.h"
#include "program/validator.h"

#include <string>

namespace pipesched::runtime {

// Collective over MPI_COMM_WORLD. Rank 0 fills p.ranks with every rank's
// ops and returns what validate() throws ("" if valid); the others return
// "". A rank that does not take part within `timeout` ends the job
// (agreement.h, waitOrAbort); rank 0 out of memory ends it too.
std::string crossCheckRanks(Program &p, int rank, int size, double timeout,
                            const ValidateOptions &options);

} // namespace pipesched::runtime
