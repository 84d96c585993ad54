#include "comm/cross_check.h"

#include "comm/abort_job.h"
#include "comm/agreement.h"
#include "program/rank_image.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

namespace pipesched::runtime {
namespace {

// MPI counts are ints: an image goes in pieces of at most 1 GiB, in order
// (messages between two ranks with one tag are not overtaken).
constexpr uint64_t kPiece = uint64_t(1) << 30;
constexpr int kImageTag = 1;
const char *const kWhat = "the exchange of the rank programs for the whole-program check";

// Posts the sends (or receives) of `bytes` to (from) `peer` in pieces.
void post(char *bytes, uint64_t n, int peer, bool send, std::vector<MPI_Request> &out) {
  for (uint64_t at = 0; at < n; at += kPiece) {
    const int count = int(std::min(kPiece, n - at));
    out.emplace_back();
    if (send)
      MPI_Isend(bytes + at, count, MPI_BYTE, peer, kImageTag, MPI_COMM_WORLD, &out.back());
    else
      MPI_Irecv(bytes + at, count, MPI_BYTE, peer, kImageTag, MPI_COMM_WORLD, &out.back());
  }
}

// Rank 0: every other rank's image, by rank (its own stays empty).
std::vector<std::string> receiveImages(const std::vector<uint64_t> &lengths, double timeout) {
  std::vector<std::string> images(lengths.size());
  std::vector<MPI_Request> requests;
  try {
    for (size_t r = 1; r < lengths.size(); ++r)
      images[r].resize(size_t(lengths[r]));
  } catch (const std::bad_alloc &) {
    // The others are sending: ending the job is the bounded way out.
    abortJob(1, "pipeline-run: rank 0: out of memory while receiving the rank programs "
                "to check the whole program");
  }
  for (size_t r = 1; r < lengths.size(); ++r)
    post(images[r].data(), lengths[r], int(r), /*send=*/false, requests);
  waitOrAbort(requests.data(), int(requests.size()), 0, timeout, kWhat);
  return images;
}

// Rank 0: the images into the program, each freed once unpacked, then the
// whole program's validation.
std::string validateWhole(Program &p, std::vector<std::string> &images,
                          const ValidateOptions &options) {
  try {
    for (size_t r = 1; r < images.size(); ++r) {
      unpackRankImage(images[r], int(r), p);
      std::string().swap(images[r]);
    }
    validate(p, options);
  } catch (const std::bad_alloc &) {
    return "pipeline-run: " + p.source + ": out of memory while rank 0 checks the "
                                         "whole program";
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

} // namespace

std::string crossCheckRanks(Program &p, int rank, int size, double timeout,
                            const ValidateOptions &options) {
  std::string mine = rank == 0 ? std::string() : packRankImage(p.ranks[size_t(rank)]);
  uint64_t length = mine.size();
  std::vector<uint64_t> lengths(rank == 0 ? size_t(size) : 0);
  MPI_Request request;
  MPI_Igather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0,
              MPI_COMM_WORLD, &request);
  waitOrAbort(&request, 1, rank, timeout, kWhat);
  if (rank != 0) {
    std::vector<MPI_Request> requests;
    post(mine.data(), length, 0, /*send=*/true, requests);
    waitOrAbort(requests.data(), int(requests.size()), rank, timeout, kWhat);
    return "";
  }
  std::vector<std::string> images = receiveImages(lengths, timeout);
  return validateWhole(p, images, options);
}

} // namespace pipesched::runtime
