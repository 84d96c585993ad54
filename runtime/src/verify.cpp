#include "verify.h"

#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pipesched::runtime {
namespace {

uint64_t fingerprint(const std::vector<std::vector<float>> &params) {
  uint64_t h = 1469598103934665603ull; // FNV-1a over the bytes
  for (const std::vector<float> &p : params) {
    const unsigned char *b = reinterpret_cast<const unsigned char *>(p.data());
    for (size_t i = 0; i < p.size() * sizeof(float); ++i)
      h = (h ^ b[i]) * 1099511628211ull;
  }
  return h;
}

double relativeError(double got, double want) {
  return std::fabs(got - want) / (std::fabs(want) + 1e-6);
}

} // namespace

bool verifyRun(MPI_Comm world, int rank, Model &model, const VerifyInputs &in) {
  const Program &p = *in.program;
  const int S = p.stages;
  // Every owner sends its copies in stage order; rank 0 receives in the same
  // order, so the blocking transfers cannot wait on each other in a cycle.
  std::vector<std::vector<float>> lowest(rank == 0 ? S : 0);
  bool ok = true;
  for (int s = 0; s < S; ++s) {
    size_t n = size_t(model.numParams(s));
    for (int o = 0; o < p.workers; ++o) {
      if (!p.ranks[o].ownsStage(s))
        continue;
      if (rank == o && o != 0)
        MPI_Send(in.owned[s]->data(), int(n), MPI_FLOAT, 0, s, world);
      if (rank != 0)
        continue;
      std::vector<float> copy(n);
      if (o == 0)
        copy = *in.owned[s];
      else
        MPI_Recv(copy.data(), int(n), MPI_FLOAT, o, s, world, MPI_STATUS_IGNORE);
      if (lowest[s].empty()) {
        lowest[s] = std::move(copy);
        continue;
      }
      size_t differ = 0;
      for (size_t k = 0; k < n; ++k)
        differ += std::memcmp(&copy[k], &lowest[s][k], sizeof(float)) != 0;
      if (differ) {
        std::printf("verify: stage %d: the replica on rank %d differs from the "
                    "lowest owner's in %zu of %zu parameters\n",
                    s, o, differ, n);
        ok = false;
      }
    }
  }
  if (rank == 0) {
    ReferenceResult ref = runReference(model, p.graph, in.data, in.optimizer, in.steps);
    // NaN compares false both ways, so std::max would drop it: a non-finite
    // value or error fails on its own.
    auto worse = [](double err, double &max) {
      if (!(err <= max))
        max = err;
    };
    double lossErr = 0;
    int badLosses = 0;
    for (int t = 0; t < in.steps; ++t) {
      badLosses += !std::isfinite(in.losses[t]) || !std::isfinite(ref.losses[t]);
      worse(relativeError(in.losses[t], ref.losses[t]), lossErr);
    }
    bool lossOk = badLosses == 0 && lossErr <= in.tolerance;
    std::printf("verify: losses of %d steps vs reference: max relative error "
                "%.1e: %s\n",
                in.steps, lossErr, lossOk ? "OK" : "FAILED");
    if (badLosses)
      std::printf("verify: %d of %d steps have a non-finite loss (run or reference)\n",
                  badLosses, in.steps);
    double maxErr = 0;
    size_t count = 0, bitwise = 0, nonFinite = 0;
    int firstStage = -1;
    size_t firstIndex = 0;
    for (int s = 0; s < S; ++s)
      for (size_t k = 0; k < lowest[s].size(); ++k) {
        const float got = lowest[s][k], want = ref.params[s][k];
        if (!std::isfinite(got) || !std::isfinite(want)) {
          if (nonFinite++ == 0) {
            firstStage = s;
            firstIndex = k;
          }
        }
        worse(relativeError(got, want), maxErr);
        bitwise += std::memcmp(&got, &want, sizeof(float)) == 0;
        ++count;
      }
    bool weightsOk = nonFinite == 0 && maxErr <= in.tolerance;
    std::printf("verify: max relative error %.1e over %zu parameters (tolerance "
                "%.0e): %s\n",
                maxErr, count, in.tolerance, weightsOk ? "OK" : "FAILED");
    if (nonFinite)
      std::printf("verify: %zu of %zu parameters are not finite (first: stage %d, "
                  "parameter %zu: %g, reference %g)\n",
                  nonFinite, count, firstStage, firstIndex,
                  double(lowest[firstStage][firstIndex]),
                  double(ref.params[firstStage][firstIndex]));
    std::printf("verify: %zu of %zu parameters bitwise equal to the reference; "
                "weights fingerprint %016llx\n",
                bitwise, count, (unsigned long long)fingerprint(lowest));
    ok = ok && lossOk && weightsOk;
  }
  int verdict = ok;
  MPI_Bcast(&verdict, 1, MPI_INT, 0, world);
  return verdict != 0;
}

} // namespace pipesched::runtime
