//===- DeadlockCheck.cpp - abstract execution of rank programs ------------===//

#include "pipesched/Scheduling/DeadlockCheck.h"

#include <map>
#include <unordered_map>

using namespace pipesched::scheduling;

namespace {
/// A posted point-to-point operation: where it lives.
struct PostedRef {
  int32_t rank;
  uint32_t step;
  uint32_t op;
};

/// The two queues of one ordered pair (sender, receiver).
struct PairQueues {
  std::vector<PostedRef> sends, recvs;
  size_t met = 0;
};

/// Arrivals at the collectives over one member set.
struct CollectiveQueues {
  std::unordered_map<int32_t, std::vector<PostedRef>> byMember;
  size_t completed = 0;
};

const char *firstDifference(const Payload &a, const Payload &b) {
  if (a.what != b.what)
    return "tensor";
  if (a.stage != b.stage)
    return "stage";
  if (a.microbatch != b.microbatch)
    return "microbatch";
  if (a.tag != b.tag)
    return "tag";
  if (a.bytes != b.bytes)
    return "bytes";
  if (a.root != b.root)
    return "root";
  return "";
}

class Executor {
public:
  explicit Executor(const std::vector<RankProgram> &ranks)
      : ranks(ranks), pc(ranks.size(), 0), posted(ranks.size(), false),
        pending(ranks.size(), 0) {}

  DeadlockResult run();

private:
  bool post(int32_t rank); // posts ranks[rank][pc]; false on mismatch
  bool matchPair(int32_t sender, int32_t receiver);
  bool matchCollective(const std::vector<int32_t> &members);
  void complete(int32_t rank, uint32_t step);
  DeadlockResult explainDeadlock();

  const std::vector<RankProgram> &ranks;
  std::vector<size_t> pc;
  std::vector<bool> posted;     // the step at pc is posted
  std::vector<size_t> pending;  // its operations not yet met
  std::map<std::pair<int32_t, int32_t>, PairQueues> pairs;
  std::map<std::vector<int32_t>, CollectiveQueues> collectives;
  std::vector<int32_t> worklist;
  DeadlockResult failure;
};
} // namespace

void Executor::complete(int32_t rank, uint32_t step) {
  if (pc[rank] != step || !posted[rank] || --pending[rank] != 0)
    return;
  worklist.push_back(rank);
}

bool Executor::matchPair(int32_t sender, int32_t receiver) {
  PairQueues &q = pairs[{sender, receiver}];
  while (q.met < q.sends.size() && q.met < q.recvs.size()) {
    PostedRef s = q.sends[q.met], r = q.recvs[q.met];
    const CommOp &sendOp = ranks[s.rank][s.step].ops[s.op];
    const CommOp &recvOp = ranks[r.rank][r.step].ops[r.op];
    if (!(sendOp.payload == recvOp.payload)) {
      failure.status = DeadlockResult::Mismatch;
      failure.first = sendOp.id;
      failure.second = recvOp.id;
      failure.field = firstDifference(sendOp.payload, recvOp.payload);
      return false;
    }
    ++q.met;
    complete(s.rank, s.step);
    complete(r.rank, r.step);
  }
  return true;
}

bool Executor::matchCollective(const std::vector<int32_t> &members) {
  CollectiveQueues &q = collectives[members];
  while (true) {
    size_t k = q.completed;
    for (int32_t m : members)
      if (q.byMember[m].size() <= k)
        return true;
    const ProgramStep *reference = nullptr;
    for (int32_t m : members) {
      PostedRef ref = q.byMember[m][k];
      const ProgramStep &step = ranks[ref.rank][ref.step];
      if (reference && !(reference->payload == step.payload)) {
        failure.status = DeadlockResult::Mismatch;
        failure.first = reference->id;
        failure.second = step.id;
        failure.field = firstDifference(reference->payload, step.payload);
        return false;
      }
      reference = &step;
    }
    ++q.completed;
    for (int32_t m : members) {
      PostedRef ref = q.byMember[m][k];
      complete(ref.rank, ref.step);
    }
  }
}

bool Executor::post(int32_t rank) {
  uint32_t stepIndex = pc[rank];
  const ProgramStep &step = ranks[rank][stepIndex];
  posted[rank] = true;
  if (step.kind == ProgramStep::Collective) {
    pending[rank] = 1;
    collectives[step.members].byMember[rank].push_back(
        {rank, stepIndex, 0});
    return matchCollective(step.members);
  }
  pending[rank] = step.ops.size();
  if (step.ops.empty())
    worklist.push_back(rank);
  for (uint32_t i = 0; i < step.ops.size(); ++i) {
    const CommOp &op = step.ops[i];
    if (op.isSend)
      pairs[{rank, op.peer}].sends.push_back({rank, stepIndex, i});
    else
      pairs[{op.peer, rank}].recvs.push_back({rank, stepIndex, i});
  }
  for (const CommOp &op : step.ops)
    if (!(op.isSend ? matchPair(rank, op.peer) : matchPair(op.peer, rank)))
      return false;
  return true;
}

DeadlockResult Executor::run() {
  for (int32_t r = static_cast<int32_t>(ranks.size()) - 1; r >= 0; --r)
    worklist.push_back(r);
  while (!worklist.empty()) {
    int32_t rank = worklist.back();
    worklist.pop_back();
    while (pc[rank] < ranks[rank].size()) {
      const ProgramStep &step = ranks[rank][pc[rank]];
      if (step.kind == ProgramStep::Local) {
        ++pc[rank];
        continue;
      }
      if (!posted[rank]) {
        if (!post(rank))
          return failure;
      }
      if (pending[rank] != 0)
        break; // blocked; a match will push it back
      posted[rank] = false;
      ++pc[rank];
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r)
    if (pc[r] < ranks[r].size())
      return explainDeadlock();
  return DeadlockResult();
}

DeadlockResult Executor::explainDeadlock() {
  DeadlockResult result;
  result.status = DeadlockResult::Deadlock;
  // What each blocked rank waits for: the first unmet operation's peer.
  std::vector<Wait> waitOf(ranks.size());
  std::vector<bool> blocked(ranks.size(), false);
  for (int32_t r = 0; r < static_cast<int32_t>(ranks.size()); ++r) {
    if (pc[r] >= ranks[r].size())
      continue;
    const ProgramStep &step = ranks[r][pc[r]];
    Wait wait{r, step.id, step.id, r, false};
    if (step.kind == ProgramStep::Collective) {
      CollectiveQueues &q = collectives[step.members];
      for (int32_t m : step.members)
        if (q.byMember[m].size() <= q.completed) {
          wait.waitsFor = m;
          break;
        }
    } else {
      for (const CommOp &op : step.ops) {
        PairQueues &q =
            op.isSend ? pairs[{r, op.peer}] : pairs[{op.peer, r}];
        // Unmet if our side's entry is at or beyond the met prefix.
        const std::vector<PostedRef> &mine = op.isSend ? q.sends : q.recvs;
        bool unmet = false;
        for (size_t k = q.met; k < mine.size(); ++k)
          if (mine[k].rank == r && mine[k].step == pc[r] &&
              &ranks[r][pc[r]].ops[mine[k].op] == &op)
            unmet = true;
        if (unmet) {
          wait.opId = op.id;
          wait.waitsFor = op.peer;
          break;
        }
      }
    }
    wait.peerFinished = pc[wait.waitsFor] >= ranks[wait.waitsFor].size();
    waitOf[r] = wait;
    blocked[r] = true;
  }
  // Follow waits-for from a blocked rank until a rank repeats: a cycle.
  for (int32_t start = 0; start < static_cast<int32_t>(ranks.size()); ++start) {
    if (!blocked[start])
      continue;
    std::vector<int32_t> seenAt(ranks.size(), -1);
    std::vector<int32_t> path;
    int32_t r = start;
    while (blocked[r] && seenAt[r] < 0) {
      seenAt[r] = path.size();
      path.push_back(r);
      r = waitOf[r].waitsFor;
    }
    if (blocked[r] && seenAt[r] >= 0) {
      for (size_t i = seenAt[r]; i < path.size(); ++i)
        result.waits.push_back(waitOf[path[i]]);
      result.cycle = true;
      return result;
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r)
    if (blocked[r])
      result.waits.push_back(waitOf[r]);
  return result;
}

DeadlockResult
pipesched::scheduling::checkDeadlockFree(const std::vector<RankProgram> &ranks) {
  return Executor(ranks).run();
}
