// One rank's loaded ops as bytes, so that a run of a per-rank program can
// validate the whole program in one place: each rank loaded and checked
// only its own file, and what --check proves across ranks (every job once,
// tags unique, matching transfers and collectives, deadlock freedom) needs
// every rank's ops. The image is the in-memory form (ops, group children,
// tensor ids), not the file: no rank parses another's JSON again.
#pragma once

#include "program/program.h"

#include <string>

namespace pipesched::runtime {

// Rank `rp`'s ops, children and tensor ids.
std::string packRankImage(const RankProgram &rp);

// Fills p.ranks[rank]'s ops, children and tensor ids from its image
// (`owns` comes from the index). The bytes come from another process: every
// field the validator indexes with is range-checked first, so that a
// malformed image (another build's) is a ProgramError, never a wild read.
void unpackRankImage(const std::string &image, int rank, Program &p);

} // namespace pipesched::runtime
