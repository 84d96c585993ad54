// MPI transport of the CPU backend. Every wait polls non-blocking requests
// against a deadline (--timeout), so that a dead or deadlocked peer ends in a
// clear message rather than a hang.
//
// Communicators: one duplicate of the world for point-to-point messages
// (each with the program's tag), one for control traffic (step barrier,
// loss reduction), and one per distinct collective group, created at
// start-up in the program's group order so that no creation waits in a cycle.
#pragma once

#include "program/program.h"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace pipesched::runtime {

class Transport {
public:
  // Collective over `world`.
  Transport(MPI_Comm world, const Program &program, int rank,
            double timeoutSeconds);
  ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  double timeout() const { return timeout_; }
  MPI_Comm world() const { return world_; }
  int rank() const { return rank_; }

  // Point-to-point: post any number, then waitPosted().
  void postSend(const float *data, size_t count, int peer, int64_t tag);
  void postRecv(float *data, size_t count, int peer, int64_t tag);
  // Waits for every posted operation. False on timeout; `pending` then lists
  // the positions (in posting order) of those that did not complete.
  bool waitPosted(std::vector<size_t> &pending);

  // Sums over the members of program.groups[group], in place.
  bool allreduce(float *data, size_t count, int group);
  // Sums onto `root` (a world rank in the group); others' data is unchanged.
  bool reduce(float *data, size_t count, int root, int group);
  // Sums over every rank, in place (--profile's all-reduce, not a program's).
  bool allreduceAll(float *data, size_t count);

  // Control plane (all ranks).
  bool barrier();
  bool reduceToRoot(const double *in, double *out, int count, MPI_Op op);
  // The last agreement of a run: every rank sends its status to rank 0,
  // which answers with the largest, point to point, so that every rank is
  // known to be alive before MPI_Finalize (which has no deadline). False on
  // timeout: on rank 0, `silent` lists the ranks it did not hear from; the
  // others wait twice the timeout for rank 0's answer (rank 0 reports a
  // missing rank first) and leave `silent` empty.
  bool agreeOnStatus(int &status, std::vector<int> &silent);

private:
  bool wait(MPI_Request *requests, size_t count, std::vector<size_t> *pending);
  int checkedCount(size_t count) const;

  MPI_Comm world_;
  const Program &program_;
  int rank_;
  double timeout_;
  MPI_Comm p2p_ = MPI_COMM_NULL, control_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> groups_; // MPI_COMM_NULL where this rank is no member
  std::vector<MPI_Request> posted_;
};

} // namespace pipesched::runtime
