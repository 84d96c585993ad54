#include "verify/verify.h"

#include "comm/abort_job.h"
#include "comm/agreement.h"
#include "comm/poll_backoff.h"
#include "model/ties.h"
#include "verify/reference.h"
#include "verify/verify_metric.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

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

} // namespace

namespace {

// While rank 0 runs the reference (as long as the run's compute, or
// longer), it sends the others an empty message every so often; each
// arrival restarts their deadline, so that a rank 0 that stalls or dies
// there still ends the job within --timeout. Rank 0 sends, the others
// receive: on `world` no other message goes that way during --verify.
constexpr int kHeartbeatTag = 0;

class Heartbeat {
public:
  Heartbeat(MPI_Comm world, double timeout) : world(world) {
    MPI_Comm_size(world, &size);
    // Well within the others' deadline, at most one a second.
    period = std::chrono::duration<double>(std::min(timeout / 4, 1.0));
  }
  void beat() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < period)
      return;
    last = now;
    for (int r = 1; r < size; ++r) {
      MPI_Request request;
      MPI_Isend(nullptr, 0, MPI_BYTE, r, kHeartbeatTag, world, &request);
      MPI_Request_free(&request);
    }
  }

private:
  MPI_Comm world;
  int size = 1;
  std::chrono::duration<double> period;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

// Rank 0's verdict on the others, who wait at most --timeout past rank 0's
// last heartbeat.
int receiveVerdict(MPI_Comm world, int rank, int verdict, double timeout) {
  MPI_Request bcast;
  MPI_Ibcast(&verdict, 1, MPI_INT, 0, world, &bcast);
  if (rank == 0) {
    waitOrAbort(&bcast, 1, rank, timeout, "the broadcast of --verify's verdict");
    return verdict;
  }
  MPI_Request heartbeat;
  MPI_Irecv(nullptr, 0, MPI_BYTE, 0, kHeartbeatTag, world, &heartbeat);
  Deadline deadline(timeout);
  PollBackoff backoff;
  for (;;) {
    int done = 0;
    MPI_Test(&bcast, &done, MPI_STATUS_IGNORE);
    if (done)
      break;
    MPI_Test(&heartbeat, &done, MPI_STATUS_IGNORE);
    if (done) {
      deadline = Deadline(timeout);
      MPI_Irecv(nullptr, 0, MPI_BYTE, 0, kHeartbeatTag, world, &heartbeat);
      backoff = PollBackoff();
      continue;
    }
    if (deadline.expired()) {
      abortJob(2,
               "pipeline-run: rank %d timed out after %.1f s waiting for rank 0's "
               "--verify (no sign of life from rank 0 while it runs the reference)",
               rank, timeout);
    }
    backoff.pause();
  }
  MPI_Cancel(&heartbeat);
  MPI_Wait(&heartbeat, MPI_STATUS_IGNORE);
  return verdict;
}

} // namespace

namespace {

const char *const kGathering = "the gathering of the weights for --verify";

// A rank other than 0 sends every stage it owns, all at once.
void sendOwnedWeights(MPI_Comm world, int rank, Model &model, const VerifyInputs &in) {
  const Program &p = *in.program;
  const int S = p.stages;
  std::vector<MPI_Request> sends;
  for (int s = 0; s < S; ++s)
    if (p.ranks[rank].ownsStage(s)) {
      sends.emplace_back();
      MPI_Isend(in.owned[s]->data(), int(model.numParams(s)), MPI_FLOAT, 0, s, world,
                &sends.back());
    }
  waitOrAbort(sends.data(), int(sends.size()), rank, in.timeout, kGathering);
}

// Rank 0 receives every owner's copy of every stage, in stage and owner
// order, keeps the lowest owner's, and says whether the others are equal
// to it bit for bit (replicas step with the same gradient).
bool gatherReplicas(MPI_Comm world, int rank, Model &model, const VerifyInputs &in,
                    std::vector<std::vector<float>> &lowest) {
  const Program &p = *in.program;
  const int S = p.stages;
  bool ok = true;
  for (int s = 0; s < S; ++s) {
    size_t n = size_t(model.numParams(s));
    for (int o = 0; o < p.workers; ++o) {
      if (!p.ranks[o].ownsStage(s))
        continue;
      std::vector<float> copy(n);
      if (o == 0) {
        copy = *in.owned[s];
      } else {
        MPI_Request recv;
        MPI_Irecv(copy.data(), int(n), MPI_FLOAT, o, s, world, &recv);
        waitOrAbort(&recv, 1, rank, in.timeout,
                    std::string(kGathering) + " (stage " + std::to_string(s) + " from rank " +
                        std::to_string(o) + ")");
      }
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
  return ok;
}

// The copies of a tied weight are one parameter: bitwise equal.
bool checkTiedCopies(const Program &p, Model &model,
                     const std::vector<std::vector<float>> &lowest) {
  bool ok = true;
  for (size_t g = 0; g < p.ties.size(); ++g) {
    const std::vector<int> &stages = p.ties[g];
    const ParamTensor first = tiedTensor(model, stages, stages[0]);
    size_t differ = 0;
    for (size_t k = 1; k < stages.size(); ++k) {
      const ParamTensor t = tiedTensor(model, stages, stages[k]);
      for (int64_t i = 0; i < first.size; ++i)
        differ += std::memcmp(&lowest[size_t(stages[0])][size_t(first.offset + i)],
                              &lowest[size_t(stages[k])][size_t(t.offset + i)],
                              sizeof(float)) != 0;
    }
    std::printf("verify: tied weight of stages %s: %zu of %lld copied parameters differ "
                "from stage %d's: %s\n",
                listString(stages).c_str(), differ,
                (long long)(first.size * int64_t(stages.size() - 1)), stages[0],
                differ ? "FAILED" : "OK");
    ok = ok && differ == 0;
  }
  return ok;
}

// Rank 0 trains the sequential reference and compares the losses and the
// weights with it, printing each verdict.
bool compareWithReference(MPI_Comm world, Model &model, const VerifyInputs &in,
                          const std::vector<std::vector<float>> &lowest) {
  const Program &p = *in.program;
  const int S = p.stages;
  Heartbeat heartbeat(world, in.timeout);
  ReferenceResult ref = runReference(model, p.graph, in.data, in.optimizer, in.steps,
                                     [&] { heartbeat.beat(); }, p.ties);
  double lossErr = 0;
  int badLosses = 0;
  for (int t = 0; t < in.steps; ++t) {
    badLosses += !std::isfinite(in.losses[t]) || !std::isfinite(ref.losses[t]);
    keepWorse(relativeError(in.losses[t], ref.losses[t]), lossErr);
  }
  bool lossOk = badLosses == 0 && lossErr <= in.tolerance;
  std::printf("verify: losses of %d steps vs reference: max relative error "
              "%.1e: %s\n",
              in.steps, lossErr, lossOk ? "OK" : "FAILED");
  if (badLosses)
    std::printf("verify: %d of %d steps have a non-finite loss (run or reference)\n",
                badLosses, in.steps);
  std::vector<std::vector<ParamTensor>> layouts;
  for (int s = 0; s < S; ++s)
    layouts.push_back(model.paramLayout(s));
  const WeightComparison c = compareWeights(lowest, ref.params, layouts);
  const bool weightsOk = c.passes(in.tolerance);
  const std::string worst =
      c.worstStage < 0 ? "none differs"
                       : "worst: stage " + std::to_string(c.worstStage) + ", " +
                             describe(c.worst);
  std::printf("verify: weights vs reference: max normwise relative error %.1e over "
              "%zu tensors (%s; tolerance %.0e): %s\n",
              c.normwise, c.tensors, worst.c_str(), in.tolerance,
              weightsOk ? "OK" : "FAILED");
  std::printf("verify: element-wise max relative error %.1e over %zu parameters "
              "(|a - b| / (|b| + 1e-6), not judged)\n",
              c.elementwise, c.params);
  if (c.nonFinite)
    std::printf("verify: %zu of %zu parameters are not finite (first: stage %d, "
                "parameter %zu: %g, reference %g)\n",
                c.nonFinite, c.params, c.firstNonFiniteStage, c.firstNonFiniteIndex,
                double(lowest[c.firstNonFiniteStage][c.firstNonFiniteIndex]),
                double(ref.params[c.firstNonFiniteStage][c.firstNonFiniteIndex]));
  std::printf("verify: %zu of %zu parameters bitwise equal to the reference; "
              "weights fingerprint %016llx\n",
              c.bitwise, c.params, (unsigned long long)fingerprint(lowest));
  return lossOk && weightsOk;
}

} // namespace

bool verifyRun(MPI_Comm world, int rank, Model &model, const VerifyInputs &in) {
  // Every owner sends all its copies at once; rank 0 receives them in stage
  // and owner order. Every wait is bounded by --timeout.
  if (rank != 0)
    sendOwnedWeights(world, rank, model, in);
  bool ok = true;
  if (rank == 0) {
    std::vector<std::vector<float>> lowest(size_t(in.program->stages));
    ok = gatherReplicas(world, rank, model, in, lowest);
    ok = checkTiedCopies(*in.program, model, lowest) && ok;
    ok = compareWithReference(world, model, in, lowest) && ok;
  }
  return receiveVerdict(world, rank, ok, in.timeout) != 0;
}

} // namespace pipesched::runtime
