#include "cuda/nccl_comms.h"

#include "comm/poll_backoff.h"
#include "cuda/cuda_check.h"

#include <algorithm>
#include <stdexcept>

namespace pipesched::runtime::cuda {
namespace {

ncclConfig_t nonBlocking() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

} // namespace

std::string NcclComms::message(ncclResult_t r, ncclComm_t comm) {
  std::string m = std::string("NCCL error: ") + ncclGetErrorString(r);
  const char *last = comm ? ncclGetLastError(comm) : nullptr;
  if (last && *last)
    m += std::string(" (") + last + ")";
  return m;
}

ncclResult_t NcclComms::state(ncclComm_t comm) {
  ncclResult_t r = ncclSuccess;
  ncclResult_t q = ncclCommGetAsyncError(comm, &r);
  return q != ncclSuccess ? q : r;
}

// Set-up polls with its own deadline: no op runs yet to report.
void NcclComms::wait(ncclComm_t comm, ncclResult_t issued, const char *what) const {
  Deadline deadline(setupSeconds_);
  PollBackoff backoff;
  ncclResult_t r = issued;
  while (r == ncclInProgress) {
    if (deadline.expired())
      setupTimedOut(what, setupSeconds_);
    backoff.pause();
    r = state(comm);
  }
  if (r != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + message(r, comm));
}

NcclComms::NcclComms(MPI_Comm world, const Program &program, int rank, double setupSeconds)
    : setupSeconds_(setupSeconds) {
  int size = 1;
  MPI_Comm_size(world, &size);
  if (size == 1)
    return; // no peers: every transfer and collective is local or absent
  world_ = initWorld(world, size, rank);

  // One communicator per distinct group of two or more members (the world
  // itself when a group is everyone). A split is collective over the world:
  // every rank walks the groups in the same order, non-members without a
  // color.
  groups_.assign(program.groups.size(), nullptr);
  for (size_t g = 0; g < program.groups.size(); ++g) {
    const std::vector<int> &members = program.groups[g];
    if (members.size() < 2)
      continue;
    if (int(members.size()) == size) {
      groups_[g] = world_;
      continue;
    }
    const bool member = std::binary_search(members.begin(), members.end(), rank);
    groups_[g] = split(member ? int(g) : NCCL_SPLIT_NOCOLOR, rank);
    if (groups_[g])
      own_.push_back(groups_[g]);
  }
}

// Rank 0 makes the id; every rank learns whether it exists before anyone
// waits on it.
ncclComm_t NcclComms::initWorld(MPI_Comm world, int size, int rank) {
  ncclUniqueId id{};
  int ok = 1;
  if (rank == 0)
    ok = ncclGetUniqueId(&id) == ncclSuccess;
  MPI_Bcast(&ok, 1, MPI_INT, 0, world);
  if (!ok)
    throw std::runtime_error("ncclGetUniqueId failed on rank 0");
  MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, world);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = nonBlocking();
  ncclResult_t r = ncclCommInitRankConfig(&comm, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    throw std::runtime_error("ncclCommInitRankConfig: " + message(r, comm));
  wait(comm, r, "ncclCommInitRankConfig");
  return comm;
}

// Key = world rank: members keep the world's order. In non-blocking mode the
// split completes (and fills the new communicator) when the parent leaves
// ncclInProgress; then the child finishes its own initialization.
ncclComm_t NcclComms::split(int color, int rank) {
  ncclComm_t comm = nullptr;
  ncclConfig_t config = nonBlocking();
  ncclResult_t r = ncclCommSplit(world_, color, rank, &comm, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    throw std::runtime_error("ncclCommSplit: " + message(r, world_));
  wait(world_, r, "ncclCommSplit");
  if (comm)
    wait(comm, state(comm), "ncclCommSplit (the group's communicator)");
  return comm;
}

std::vector<ncclComm_t> NcclComms::all() const {
  std::vector<ncclComm_t> comms = own_;
  if (world_)
    comms.push_back(world_);
  return comms;
}

NcclComms::~NcclComms() {
  if (aborted_)
    return;
  for (ncclComm_t c : all()) {
    // A communicator that cannot finish in time is aborted instead.
    try {
      wait(c, ncclCommFinalize(c), "ncclCommFinalize");
      ncclCommDestroy(c);
    } catch (const std::exception &) {
      ncclCommAbort(c);
    }
  }
}

std::string NcclComms::asyncError() const {
  for (ncclComm_t c : all()) {
    ncclResult_t r = state(c);
    if (r != ncclSuccess && r != ncclInProgress)
      return message(r, c);
  }
  return "";
}

void NcclComms::abort() {
  if (aborted_)
    return;
  aborted_ = true;
  for (ncclComm_t c : all())
    ncclCommAbort(c);
}

} // namespace pipesched::runtime::cuda
