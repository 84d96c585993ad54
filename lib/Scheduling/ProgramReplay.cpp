//===- ProgramReplay.cpp - timing the rank programs themselves ------------===//

#include "pipesched/Scheduling/ProgramReplay.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

using namespace pipesched::scheduling;

/// A message of `bytes` over a link: latency + bytes * perByte, or
/// `transfer` without a link model (perByte < 0).
static double overLink(double latency, double perByte, double transfer,
                       int64_t bytes) {
  return perByte < 0 ? transfer : latency + double(bytes) * perByte;
}

double ReplayCosts::message(int64_t bytes) const {
  return overLink(latency, perByte, transfer, bytes);
}

double ReplayCosts::messageBetween(int64_t bytes, int32_t sender,
                                   int32_t receiver) const {
  if (nodeOf.empty() || nodeOf[size_t(sender)] == nodeOf[size_t(receiver)])
    return message(bytes);
  return overLink(interLatency, interPerByte, interTransfer, bytes);
}

double ReplayCosts::collective(int64_t bytes, size_t members,
                               bool allReduce) const {
  if (members < 2)
    return 0;
  if (reduceBytes > 0)
    return reduce * double(bytes) / double(reduceBytes) * (allReduce ? 1 : 0.5);
  if (perByte < 0)
    return transfer;
  double n = double(members);
  double steps = allReduce ? 2 * (n - 1) : n - 1;
  return steps * (latency + double(bytes) / n * perByte);
}

double ReplayCosts::collectiveOver(int64_t bytes,
                                   const std::vector<int32_t> &members,
                                   bool allReduce) const {
  if (nodeOf.empty() || reduceBytes > 0 || members.size() < 2)
    return collective(bytes, members.size(), allReduce);
  // The members' nodes, sorted: how many nodes, and the most on one.
  std::vector<int64_t> nodes;
  for (int32_t m : members)
    nodes.push_back(nodeOf[size_t(m)]);
  std::sort(nodes.begin(), nodes.end());
  size_t spanned = 0, most = 0;
  for (size_t i = 0, j = 0; i < nodes.size(); i = j, ++spanned) {
    while (j < nodes.size() && nodes[j] == nodes[i])
      ++j;
    most = std::max(most, j - i);
  }
  if (spanned < 2)
    return collective(bytes, members.size(), allReduce);
  if (perByte < 0 || interPerByte < 0)
    return interTransfer;
  auto ring = [&](double n, double steps, double lat, double pb) {
    return steps * (lat + double(bytes) / n * pb);
  };
  double n = double(members.size()), k = double(spanned), m = double(most);
  double flat = ring(n, allReduce ? 2 * (n - 1) : n - 1, interLatency,
                     interPerByte);
  double inside = ring(m, m - 1, latency, perByte);
  double between = ring(k, allReduce ? 2 * (k - 1) : k - 1, interLatency,
                        interPerByte);
  return std::min(flat, inside + between + (allReduce ? inside : 0));
}

std::string ReplayCosts::check() const {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(latency) || bad(transfer) || bad(reduce) || reduceBytes < 0 ||
      !std::isfinite(perByte) || bad(interLatency) || bad(interTransfer) ||
      !std::isfinite(interPerByte))
    return "a transfer cost is negative or not finite";
  for (double v : optimizer)
    if (bad(v))
      return "an optimizer time is negative or not finite";
  for (double v : durations)
    if (bad(v))
      return "a job's duration is negative or not finite";
  return "";
}

namespace {
constexpr double kUnposted = -1;

/// The clock of every rank, advanced as far as each can go.
class Replayer {
public:
  Replayer(const CommProblem &p, const CommPlan &plan, const ReplayCosts &c)
      : p(p), plan(plan), costs(c), W(plan.programs.size()), pc(W, 0),
        now(W, 0), posted(W, false), sendPost(plan.messages.size(), kUnposted),
        recvPost(plan.messages.size(), kUnposted),
        arrived(plan.reductions.size() + plan.tied.size(), 0),
        lastArrival(plan.reductions.size() + plan.tied.size(), 0),
        reduced(plan.reductions.size() + plan.tied.size(), kUnposted) {
    result.jobStart.assign(p.jobs.size(), 0);
    result.jobEnd.assign(p.jobs.size(), 0);
  }

  ReplayResult run() {
    for (size_t w = 0; w < W; ++w)
      ready.push_back(w);
    while (!ready.empty()) {
      size_t w = ready.front();
      ready.pop_front();
      advance(w);
    }
    result.finish = now;
    for (size_t w = 0; w < W; ++w) {
      if (pc[w] < plan.programs[w].size())
        result.error += (result.error.empty() ? "" : ", ") +
                        std::string("worker ") + std::to_string(w) +
                        " waits at op " + std::to_string(pc[w]);
      result.makespan = std::max(result.makespan, now[w]);
    }
    if (!result.error.empty())
      result.error = "the programs cannot run to the end: " + result.error;
    return std::move(result);
  }

private:
  /// The end of the group that starts at `i` on worker w.
  size_t groupEnd(size_t w, size_t i) const {
    const std::vector<PlanOp> &program = plan.programs[w];
    int32_t group = program[i].group;
    size_t end = i + 1;
    while (group >= 0 && end < program.size() && program[end].group == group)
      ++end;
    return end;
  }

  void wake(size_t w) { ready.push_back(w); }

  /// Runs worker w until it ends or waits for another worker.
  void advance(size_t w) {
    const std::vector<PlanOp> &program = plan.programs[w];
    while (pc[w] < program.size()) {
      const PlanOp &op = program[pc[w]];
      switch (op.kind) {
      case PlanOp::Job:
        result.jobStart[op.index] = now[w];
        now[w] += costs.duration(p, op.index);
        result.jobEnd[op.index] = now[w];
        ++pc[w];
        break;
      case PlanOp::ReleaseWeights:
        ++pc[w];
        break;
      case PlanOp::OptimizerStep: {
        size_t stage = size_t(plan.reductions[op.index].stage);
        if (stage < costs.optimizer.size())
          now[w] += costs.optimizer[stage];
        ++pc[w];
        break;
      }
      case PlanOp::Collective:
      case PlanOp::TiedGrad:
        if (!reduce(w, op))
          return; // woken when the last member arrives
        break;
      case PlanOp::Send:
      case PlanOp::Recv:
        if (!transfer(w))
          return; // woken when the other end posts
        break;
      }
    }
  }

  /// Worker w at a reduction or a tied reduction (an all-reduce of the
  /// tied tensor, charged its `weights` bytes; local with one member):
  /// posts it once, and passes it when the last member has arrived.
  bool reduce(size_t w, const PlanOp &op) {
    bool isTied = op.kind == PlanOp::TiedGrad;
    size_t slot = isTied ? plan.reductions.size() + op.index : op.index;
    const std::vector<int32_t> &members =
        isTied ? plan.tied[op.index].members : plan.reductions[op.index].members;
    if (!posted[w]) {
      posted[w] = true;
      lastArrival[slot] = std::max(lastArrival[slot], now[w]);
      if (++arrived[slot] == members.size()) {
        reduced[slot] =
            lastArrival[slot] +
            (isTied ? costs.collectiveOver(plan.tied[op.index].bytes, members,
                                           true)
                    : costs.collectiveOver(
                          plan.reductions[op.index].bytes, members,
                          plan.reductions[op.index].isAllReduce()));
        for (int32_t m : members)
          if (size_t(m) != w)
            wake(size_t(m));
      }
    }
    if (reduced[slot] == kUnposted)
      return false;
    now[w] = reduced[slot];
    posted[w] = false;
    ++pc[w];
    return true;
  }

  /// Worker w at a group of transfers (a lone transfer is a group of one):
  /// posts every end once, and passes when each message has moved.
  bool transfer(size_t w) {
    const std::vector<PlanOp> &program = plan.programs[w];
    size_t end = groupEnd(w, pc[w]);
    if (!posted[w]) {
      posted[w] = true;
      for (size_t i = pc[w]; i < end; ++i) {
        const PlanOp &part = program[i];
        const Message &m = plan.messages[part.index];
        bool send = part.kind == PlanOp::Send;
        (send ? sendPost : recvPost)[part.index] = now[w];
        wake(size_t(send ? m.receiver : m.sender));
      }
    }
    double done = now[w];
    for (size_t i = pc[w]; i < end; ++i) {
      uint32_t m = program[i].index;
      if (sendPost[m] == kUnposted || recvPost[m] == kUnposted)
        return false;
      const Message &message = plan.messages[m];
      done = std::max(done, std::max(sendPost[m], recvPost[m]) +
                                costs.messageBetween(message.bytes,
                                                     message.sender,
                                                     message.receiver));
    }
    now[w] = done;
    posted[w] = false;
    pc[w] = end;
    return true;
  }

  const CommProblem &p;
  const CommPlan &plan;
  const ReplayCosts &costs;
  size_t W;
  std::vector<size_t> pc;
  std::vector<double> now;
  std::vector<bool> posted; ///< the current group or reduction is posted
  std::vector<double> sendPost, recvPost;
  std::vector<size_t> arrived;
  std::vector<double> lastArrival, reduced;
  std::deque<size_t> ready;
  ReplayResult result;
};
} // namespace

ReplayResult pipesched::scheduling::replayPrograms(const CommProblem &problem,
                                                   const CommPlan &plan,
                                                   const ReplayCosts &costs) {
  return Replayer(problem, plan, costs).run();
}

std::string ReplayResult::verify(const CommProblem &problem,
                                 const CommPlan &plan,
                                 const ReplayCosts &costs) const {
  if (!error.empty())
    return error;
  if (finish.size() != plan.programs.size() ||
      jobStart.size() != problem.jobs.size() ||
      jobEnd.size() != problem.jobs.size())
    return "the replay's sizes do not match the plan";
  double latest = 0;
  for (size_t w = 0; w < plan.programs.size(); ++w) {
    double free = 0;
    for (const PlanOp &op : plan.programs[w]) {
      if (op.kind != PlanOp::Job)
        continue;
      double start = jobStart[op.index], end = jobEnd[op.index];
      if (start < free)
        return "worker " + std::to_string(w) + " starts job " +
               std::to_string(op.index) + " before its previous job ends";
      if (std::fabs((end - start) - costs.duration(problem, op.index)) >
          1e-6 * (1 + end))
        return "job " + std::to_string(op.index) + " changed its duration";
      free = end;
    }
    if (finish[w] < free)
      return "worker " + std::to_string(w) + " finishes before its last job";
    latest = std::max(latest, finish[w]);
  }
  if (latest != makespan)
    return "the makespan is not the latest finish";
  return "";
}
