#include "comm/gather.h"

#include "comm/agreement.h"

#include <limits>
#include <stdexcept>

namespace pipesched::runtime {

std::vector<std::string> gatherToRoot(MPI_Comm world, const std::string &mine, int rank,
                                      double timeout, const std::string &what) {
  // MPI counts and displacements are ints. A throw here ends the job
  // (main.cpp's abortOnError), so no rank is left waiting.
  constexpr size_t kMax = size_t(std::numeric_limits<int>::max());
  if (mine.size() > kMax)
    throw std::runtime_error(what + ": rank " + std::to_string(rank) +
                             " has more than 2 GiB to send");
  int size;
  MPI_Comm_size(world, &size);
  int length = int(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size)), offsets(lengths.size());
  MPI_Request request;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world, &request);
  waitOrAbort(&request, 1, rank, timeout, what);
  std::string all;
  if (rank == 0) {
    size_t total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[size_t(r)] = int(total);
      total += size_t(lengths[size_t(r)]);
      if (total > kMax)
        throw std::runtime_error(what + ": more than 2 GiB in all");
    }
    all.resize(total);
  }
  MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
               MPI_CHAR, 0, world, &request);
  waitOrAbort(&request, 1, rank, timeout, what);
  std::vector<std::string> parts;
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      parts.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(lengths[size_t(r)])));
  return parts;
}

} // namespace pipesched::runtime
