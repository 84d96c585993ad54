#include "nccl_comms.h"

#include "../poll_backoff.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

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

// Set-up polls with the deadline itself: no op runs yet to report.
void NcclComms::wait(ncclComm_t comm, ncclResult_t issued, const char *what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = deadlineAfter(Clock::now(), timeout_);
  ncclResult_t r = issued;
  while (r == ncclInProgress) {
    if (Clock::now() > deadline)
      throw std::runtime_error(std::string(what) + " timed out after " +
                               std::to_string(timeout_) + " s");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    r = state(comm);
  }
  if (r != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + message(r, comm));
}

NcclComms::NcclComms(MPI_Comm world, const Program &program, int rank,
                     double timeoutSeconds)
    : timeout_(timeoutSeconds) {
  int size = 0;
  MPI_Comm_size(world, &size);
  std::vector<int> everyone(size_t(size), 0);
  for (int r = 0; r < size; ++r)
    everyone[size_t(r)] = r;
  world_ = init(world, everyone, rank);

  // One communicator per distinct group of two or more members (the world
  // itself when a group is everyone); every rank walks the groups in the
  // same order, so no initialization waits on a later one.
  groups_.assign(program.groups.size(), nullptr);
  for (size_t g = 0; g < program.groups.size(); ++g) {
    const std::vector<int> &members = program.groups[g];
    if (members.size() < 2)
      continue;
    if (int(members.size()) == size) {
      groups_[g] = world_;
      continue;
    }
    groups_[g] = init(world, members, rank);
    if (groups_[g])
      own_.push_back(groups_[g]);
  }
}

// The lowest member makes the id, every rank of `world` takes part in its
// broadcast, the members join with their index in the sorted group (which
// reduce_grad's root relies on). Null where `rank` is no member.
ncclComm_t NcclComms::init(MPI_Comm world, const std::vector<int> &members, int rank) {
  ncclUniqueId id{};
  int ok = 1;
  if (rank == members.front())
    ok = ncclGetUniqueId(&id) == ncclSuccess;
  // Everyone learns whether the id exists before anyone waits on it.
  MPI_Bcast(&ok, 1, MPI_INT, members.front(), world);
  if (!ok)
    throw std::runtime_error("ncclGetUniqueId failed on rank " +
                             std::to_string(members.front()));
  MPI_Bcast(&id, int(sizeof id), MPI_BYTE, members.front(), world);
  auto me = std::lower_bound(members.begin(), members.end(), rank);
  if (me == members.end() || *me != rank)
    return nullptr;
  ncclComm_t comm = nullptr;
  ncclConfig_t config = nonBlocking();
  ncclResult_t r = ncclCommInitRankConfig(&comm, int(members.size()), id,
                                          int(me - members.begin()), &config);
  if (r != ncclSuccess && r != ncclInProgress)
    throw std::runtime_error("ncclCommInitRankConfig: " + message(r, comm));
  wait(comm, r, "ncclCommInitRankConfig");
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
