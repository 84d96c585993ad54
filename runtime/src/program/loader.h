// Reads a program (JSON or CBOR, one document or the per-rank layout;
// docs/program-format.md, version 2) into a Program, checking every field,
// type and range, and each compute op's reads and writes against the stage
// graph (roles.h). Cross-rank consistency
// (every job once, data and weights in place, matching transfers and
// collectives, deadlock freedom, optimizer steps) is validate()'s job
// (validator.h).
#pragma once

#include "program/program.h"
#include "program/program_error.h"

#include <string>

namespace pipesched::runtime {

// A single document, JSON or CBOR (document.h). `worldSize` < 0 skips the
// check that `workers` equals the launched ranks.
Program parseProgram(const std::string &text, const std::string &source,
                     int worldSize);

// `path`: a single document, or a program in the per-rank layout (a
// directory, or the index file inside it; docs/program-format.md, "Big
// programs"). Of a per-rank program, `rank` >= 0 loads the index and that
// rank's file only (Program::onlyRank; what a run needs), -1 every rank's
// file (what --check and validate() need). A single document is read
// whole whatever `rank`.
Program loadProgram(const std::string &path, int worldSize, int rank = -1);

} // namespace pipesched::runtime
