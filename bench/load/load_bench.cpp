// pipesched-bench-load: how fast pipeline-run loads a big program
// (docs/program-format.md, "Big programs"; bench/run's loading table runs
// it on what pipeline-compile writes in each layout and encoding).
//
//   pipesched-bench-load load PATH [RANK]
//
// `load` times what a rank of pipeline-run does before any communication:
// loadProgram, then validate() when every rank's ops were loaded (a single
// document, or a per-rank directory without RANK: --check); with RANK, a
// per-rank directory's index and that rank's file only, then
// validateRank(). Peak memory is the
// caller's (/usr/bin/time -f %M).
#include "program/document.h"
#include "program/loader.h"
#include "program/validator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace pipesched::runtime;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int load(const std::string &path, int rank) {
  auto start = std::chrono::steady_clock::now();
  Program p = loadProgram(path, -1, rank);
  const double loaded = secondsSince(start);
  if (p.onlyRank < 0)
    validate(p);
  else
    validateRank(p, p.onlyRank);
  const double total = secondsSince(start);
  size_t ops = 0;
  for (const RankProgram &rp : p.ranks)
    ops += rp.ops.size() + rp.children.size();
  std::printf("%s%s: %d ranks, %zu ops loaded: load %.3f s, validate %.3f s, total %.3f s\n",
              path.c_str(), rank >= 0 ? (" rank " + std::to_string(rank)).c_str() : "",
              p.workers, ops, loaded, total - loaded, total);
  return 0;
}

int usage() {
  std::fputs("usage: pipesched-bench-load load PATH [RANK]\n", stderr);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "load" && (argc == 3 || argc == 4))
      return load(argv[2], argc == 4 ? std::atoi(argv[3]) : -1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "pipesched-bench-load: %s\n", e.what());
    return 1;
  }
  return usage();
}
