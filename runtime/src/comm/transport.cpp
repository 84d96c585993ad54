#include "comm/transport.h"

#include "comm/poll_backoff.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <thread>

namespace pipesched::runtime {

Transport::Transport(MPI_Comm world, const Program &program, int rank,
                     double timeoutSeconds)
    : world_(world), program_(program), rank_(rank), timeout_(timeoutSeconds) {
  MPI_Comm_dup(world, &p2p_);
  MPI_Comm_dup(world, &control_);
  MPI_Group worldGroup;
  MPI_Comm_group(world, &worldGroup);
  groups_.assign(program.groups.size(), MPI_COMM_NULL);
  for (size_t g = 0; g < program.groups.size(); ++g) {
    const std::vector<int> &members = program.groups[g];
    if (!std::binary_search(members.begin(), members.end(), rank))
      continue;
    // Collective over the members only; every rank walks the groups in the
    // same order, so creations cannot wait on each other in a cycle.
    MPI_Group group;
    MPI_Group_incl(worldGroup, int(members.size()), members.data(), &group);
    MPI_Comm_create_group(world, group, int(g % 32768), &groups_[g]);
    MPI_Group_free(&group);
  }
  MPI_Group_free(&worldGroup);
}

Transport::~Transport() {
  for (MPI_Comm &c : groups_)
    if (c != MPI_COMM_NULL)
      MPI_Comm_free(&c);
  MPI_Comm_free(&control_);
  MPI_Comm_free(&p2p_);
}

int Transport::checkedCount(size_t count) const {
  if (count > size_t(INT_MAX))
    throw std::runtime_error("message of " + std::to_string(count) +
                             " floats exceeds MPI's int count");
  return int(count);
}

void Transport::postSend(const float *data, size_t count, int peer, int64_t tag) {
  posted_.emplace_back();
  MPI_Isend(data, checkedCount(count), MPI_FLOAT, peer, int(tag), p2p_,
            &posted_.back());
}

void Transport::postRecv(float *data, size_t count, int peer, int64_t tag) {
  posted_.emplace_back();
  MPI_Irecv(data, checkedCount(count), MPI_FLOAT, peer, int(tag), p2p_,
            &posted_.back());
}

bool Transport::waitPosted(std::vector<size_t> &pending) {
  bool ok = wait(posted_.data(), posted_.size(), &pending);
  posted_.clear();
  return ok;
}

// Polls with MPI_Testsome (which also drives MPI's progress), pausing as
// PollBackoff says: measured with 8 ranks on 2 cores, yielding first beats
// sleeping, and non-blocking collectives progress only while ranks poll.
bool Transport::wait(MPI_Request *requests, size_t count,
                     std::vector<size_t> *pending) {
  Deadline deadline(timeout_);
  PollBackoff backoff;
  std::vector<int> indices(count);
  size_t done = 0;
  while (done < count) {
    int outcount = 0;
    MPI_Testsome(int(count), requests, &outcount, indices.data(),
                 MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
      done += size_t(outcount);
    if (done >= count)
      break;
    if (deadline.expired()) {
      if (pending)
        for (size_t i = 0; i < count; ++i)
          if (requests[i] != MPI_REQUEST_NULL)
            pending->push_back(i);
      return false;
    }
    backoff.pause();
  }
  return true;
}

bool Transport::allreduce(float *data, size_t count, int group) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, data, checkedCount(count), MPI_FLOAT, MPI_SUM,
                 groups_[group], &request);
  return wait(&request, 1, nullptr);
}

bool Transport::allreduceAll(float *data, size_t count) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, data, checkedCount(count), MPI_FLOAT, MPI_SUM, p2p_,
                 &request);
  return wait(&request, 1, nullptr);
}

bool Transport::reduce(float *data, size_t count, int root, int group) {
  const std::vector<int> &members = program_.groups[group];
  int groupRoot =
      int(std::lower_bound(members.begin(), members.end(), root) - members.begin());
  MPI_Request request;
  if (rank_ == root)
    MPI_Ireduce(MPI_IN_PLACE, data, checkedCount(count), MPI_FLOAT, MPI_SUM,
                groupRoot, groups_[group], &request);
  else
    MPI_Ireduce(data, nullptr, checkedCount(count), MPI_FLOAT, MPI_SUM,
                groupRoot, groups_[group], &request);
  return wait(&request, 1, nullptr);
}

bool Transport::barrier() {
  MPI_Request request;
  MPI_Ibarrier(control_, &request);
  return wait(&request, 1, nullptr);
}

bool Transport::reduceToRoot(const double *in, double *out, int count, MPI_Op op) {
  MPI_Request request;
  MPI_Ireduce(in, out, count, MPI_DOUBLE, op, 0, control_, &request);
  return wait(&request, 1, nullptr);
}

bool Transport::agreeOnStatus(int &status, std::vector<int> &silent) {
  int size = 1;
  MPI_Comm_size(control_, &size);
  constexpr int kTag = 0; // control_ carries no other point-to-point message
  if (rank_ == 0) {
    std::vector<int> statuses(size_t(size), status);
    std::vector<MPI_Request> requests(size_t(size - 1));
    for (int r = 1; r < size; ++r)
      MPI_Irecv(&statuses[size_t(r)], 1, MPI_INT, r, kTag, control_,
                &requests[size_t(r - 1)]);
    std::vector<size_t> pending;
    if (!wait(requests.data(), requests.size(), &pending)) {
      for (size_t i : pending)
        silent.push_back(int(i) + 1);
      return false;
    }
    status = *std::max_element(statuses.begin(), statuses.end());
    for (int r = 1; r < size; ++r)
      MPI_Isend(&status, 1, MPI_INT, r, kTag, control_, &requests[size_t(r - 1)]);
    return wait(requests.data(), requests.size(), nullptr);
  }
  int answer = status;
  MPI_Request requests[2];
  MPI_Isend(&status, 1, MPI_INT, 0, kTag, control_, &requests[0]);
  MPI_Irecv(&answer, 1, MPI_INT, 0, kTag, control_, &requests[1]);
  Deadline deadline(2 * timeout_);
  PollBackoff backoff;
  for (;;) {
    int done = 0;
    MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
    if (done)
      break;
    if (deadline.expired())
      return false;
    backoff.pause();
  }
  status = answer;
  return true;
}

} // namespace pipesched::runtime
