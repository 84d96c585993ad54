// The cross-rank half of validation, shared with the compiler: the rank
// programs go through pipesched::scheduling::checkDeadlockFree
// (include/pipesched/Scheduling/DeadlockCheck.h, compiled in from lib/),
// which executes them abstractly with NCCL's rules (per ordered pair of
// ranks the k-th send meets the k-th receive; a group completes when all its
// operations met; a collective when all members reached it) and either
// proves that every rank reaches its end or returns what went wrong. This
// file translates the answer into the runtime's located messages.
#pragma once

#include "program/program.h"

namespace pipesched::runtime {

// Throws ProgramError when a send and its receive (or the members of a
// collective) disagree, or when the ranks deadlock.
void checkMatching(const Program &program);

} // namespace pipesched::runtime
