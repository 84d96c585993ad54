// The NCCL communicators of the CUDA backend (--gpu-comm nccl): one over all
// ranks for point-to-point transfers, bootstrapped by broadcasting an
// ncclUniqueId over MPI, and one per distinct collective group of the
// program, split from it (members by color, ranked by world rank, so a
// member's index is its place in the sorted group). A world of one rank has
// no peers and gets no communicator. All are non-blocking
// (config.blocking = 0): a call may return before it is enqueued, and the
// caller polls state() with its deadline, so that a peer that never comes
// ends in a timeout instead of a hang.
#pragma once

#include "program/program.h"

#include <mpi.h>
#include <nccl.h>

#include <string>
#include <vector>

namespace pipesched::runtime::cuda {

class NcclComms {
public:
  // Collective over `world`; throws std::runtime_error on an NCCL error or
  // when a set-up step takes longer than setupSeconds (--setup-timeout),
  // which also bounds the tear-down.
  NcclComms(MPI_Comm world, const Program &program, int rank, double setupSeconds);
  ~NcclComms();
  NcclComms(const NcclComms &) = delete;
  NcclComms &operator=(const NcclComms &) = delete;

  // Null in a world of one rank.
  ncclComm_t world() const { return world_; }
  // The communicator of program.groups[g]; null for a group of one (nothing
  // to reduce) and where this rank is no member.
  ncclComm_t group(int g) const { return groups_.empty() ? nullptr : groups_[g]; }

  // ncclInProgress while `comm` still enqueues an operation, ncclSuccess
  // when done, an error otherwise.
  static ncclResult_t state(ncclComm_t comm);
  // The first asynchronous error of any communicator, "" if none.
  std::string asyncError() const;
  // ncclCommAbort on every communicator (after a timeout or an error).
  void abort();

  static std::string message(ncclResult_t r, ncclComm_t comm);

private:
  ncclComm_t initWorld(MPI_Comm world, int size, int rank);
  ncclComm_t split(int color, int rank);
  // Polls `comm` until `issued` (its last call's result) is no longer
  // ncclInProgress, within the set-up deadline; throws otherwise.
  void wait(ncclComm_t comm, ncclResult_t issued, const char *what) const;
  std::vector<ncclComm_t> all() const;

  double setupSeconds_;
  ncclComm_t world_ = nullptr;
  std::vector<ncclComm_t> groups_; // may alias world_
  std::vector<ncclComm_t> own_;    // the groups' own, besides world_
  bool aborted_ = false;
};

} // namespace pipesched::runtime::cuda
