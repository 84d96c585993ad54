//===- InsertComm.cpp - derive transfers, fetches and reductions ----------===//
//
// Every worker's program is a sequence of points ("boundaries") around its
// jobs: boundary i comes just before job i (its time is the job's simulated
// start) and boundary n after the last job. Communication is attached to
// boundaries in three phases: collect what must happen, number every
// worker's program, then create the ops.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Dialect/Sched/SchedOps.h"
#include "pipesched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace pipesched {
#define GEN_PASS_DEF_SCHEDINSERTCOMM
#include "pipesched/Transforms/Passes.h.inc"
} // namespace pipesched

using namespace mlir;
using namespace pipesched;
using namespace pipesched::sched;

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// A worker's jobs in program order and the times of its boundaries.
struct Worker {
  SmallVector<JobOpInterface> jobs;
  SmallVector<int64_t> boundaryTime; // jobs.size() + 1 entries

  /// The first boundary in [lo, hi] whose time is >= t (hi if none).
  unsigned firstAtOrAfter(int64_t t, unsigned lo, unsigned hi) const {
    auto it = std::lower_bound(boundaryTime.begin() + lo,
                               boundaryTime.begin() + hi, t);
    return it - boundaryTime.begin();
  }
};

enum class MessageKind { Data, Weights };

/// One point-to-point message, both ends.
struct Message {
  MessageKind kind;
  int64_t time, seq; // order of messages: (time, seq)
  int64_t sender, receiver, stage, microbatch;
  TensorKind tensor;    // Data only
  Value value;          // Data only: the tensor sent
  unsigned senderAt = 0, receiverAt = 0; // boundaries
  int64_t tag = 0;
  Location loc;
};

/// A gradient reduction of one stage and the optimizer steps after it.
struct Reduction {
  int64_t time, stage;
  SmallVector<int64_t> members, owners;
  SmallVector<std::pair<int64_t, unsigned>> at; // (member, boundary)
};

/// Where a new op goes in a worker's program and its group.
struct Slot {
  int64_t order;
  std::optional<int64_t> group;
};

struct SchedInsertComm
    : pipesched::impl::SchedInsertCommBase<SchedInsertComm> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SchedInsertComm::runOnOperation() {
  StepOp step = getOperation();
  if (step.isSpec())
    return;
  if (!step.isJobGraph()) {
    step.emitOpError("already has communication or rank programs");
    return signalPassFailure();
  }
  if (prefetchDepth < 0) {
    step.emitOpError("prefetch-depth must be non-negative");
    return signalPassFailure();
  }
  MLIRContext *ctx = &getContext();
  int64_t numWorkers = step.getWorkers();
  CostAttr cost = step.getCostOrDefault();
  bool split = cost.isSplitBackward();

  // Phase 0: each worker's jobs in order, with their boundary times.
  SmallVector<Worker> workers(numWorkers);
  llvm::DenseMap<Operation *, unsigned> indexOnWorker;
  for (Operation &op : step.getBody().front()) {
    auto job = cast<JobOpInterface>(op);
    if (!job.getComputeWorker() || !job.getOrderIndex() ||
        !job.getStartTime() || !job.getEndTime()) {
      job->emitOpError() << describeJob(job)
                         << " is not simulated: run --sched-place and "
                            "--sched-simulate first";
      return signalPassFailure();
    }
    workers[*job.getComputeWorker()].jobs.push_back(job);
  }
  for (Worker &w : workers) {
    // Sort by the simulated positions, read once.
    SmallVector<std::pair<int64_t, JobOpInterface>> byOrder;
    for (JobOpInterface job : w.jobs)
      byOrder.push_back({*job.getOrderIndex(), job});
    llvm::sort(byOrder, [](auto &a, auto &b) { return a.first < b.first; });
    for (auto [i, entry] : llvm::enumerate(byOrder))
      w.jobs[i] = entry.second;
    for (auto [i, job] : llvm::enumerate(w.jobs)) {
      w.boundaryTime.push_back(*job.getStartTime());
      indexOnWorker[job] = i;
    }
    w.boundaryTime.push_back(kNever);
  }
  auto workerOf = [](JobOpInterface job) { return *job.getComputeWorker(); };

  // Phase 1a: data messages, once per (tensor, receiving worker).
  SmallVector<Message> messages;
  llvm::DenseMap<std::pair<Value, int64_t>, unsigned> messageOf;
  for (Operation &op : step.getBody().front()) {
    auto consumer = cast<JobOpInterface>(op);
    int64_t receiver = workerOf(consumer);
    for (Value value : op.getOperands()) {
      auto producer = value.getDefiningOp<JobOpInterface>();
      int64_t sender = workerOf(producer);
      if (sender == receiver)
        continue;
      unsigned consumerAt = indexOnWorker[consumer];
      auto [it, inserted] =
          messageOf.try_emplace({value, receiver}, messages.size());
      if (!inserted) {
        Message &m = messages[it->second];
        m.receiverAt = std::min(m.receiverAt, consumerAt);
        continue;
      }
      Message m{MessageKind::Data, *producer.getEndTime(),
                static_cast<int64_t>(messages.size()), sender, receiver,
                producer.getStageIndex(), producer.getMicrobatchIndex(),
                producer.getDirection() == Direction::Forward
                    ? TensorKind::Activation
                    : TensorKind::Gradient,
                value, indexOnWorker[producer] + 1, consumerAt, 0,
                producer->getLoc()};
      messages.push_back(m);
    }
  }
  // Both ends at their first boundary at or after the production time: the
  // sender after the producer, the receiver no later than its consumer.
  for (Message &m : messages) {
    const Worker &s = workers[m.sender], &r = workers[m.receiver];
    m.senderAt = s.firstAtOrAfter(m.time, m.senderAt, s.jobs.size());
    m.receiverAt = r.firstAtOrAfter(m.time, 0, m.receiverAt);
  }

  // Phase 1b: weight windows. A copy fetched for a run of consecutive jobs
  // of one stage is released after the run.
  struct Release {
    int64_t worker, stage;
    unsigned at;
  };
  SmallVector<Release> releases;
  for (auto [c, w] : llvm::enumerate(workers)) {
    llvm::DenseMap<int64_t, unsigned> releasedAt; // stage -> last release
    for (unsigned i = 0; i < w.jobs.size();) {
      JobOpInterface job = w.jobs[i];
      int64_t owner = job.getWeightsWorker().value_or(c);
      int64_t stage = job.getStageIndex();
      unsigned end = i + 1;
      while (end < w.jobs.size() && w.jobs[end].getStageIndex() == stage &&
             w.jobs[end].getWeightsWorker().value_or(c) == owner)
        ++end;
      if (owner != static_cast<int64_t>(c)) {
        unsigned fetchAt =
            i >= static_cast<unsigned>(prefetchDepth) ? i - prefetchDepth : 0;
        // Never hold two copies of one stage: wait for the last release.
        fetchAt = std::max(fetchAt, releasedAt.lookup(stage));
        Message m{MessageKind::Weights, w.boundaryTime[fetchAt],
                  static_cast<int64_t>(messages.size()), owner,
                  static_cast<int64_t>(c), stage, -1, TensorKind::Activation,
                  Value(), 0, fetchAt, 0, job->getLoc()};
        const Worker &o = workers[owner];
        m.senderAt = o.firstAtOrAfter(m.time, 0, o.jobs.size());
        messages.push_back(m);
        releases.push_back({static_cast<int64_t>(c), stage, end});
        releasedAt[stage] = end;
      }
      i = end;
    }
  }

  // Phase 1c: one reduction per stage, after its last weight-gradient job.
  int64_t numStages = step.getStages();
  SmallVector<llvm::SmallDenseSet<int64_t, 4>> owners(numStages);
  SmallVector<llvm::SmallDenseMap<int64_t, unsigned, 4>> lastGradJob(numStages);
  SmallVector<int64_t> gradTime(numStages, 0);
  Direction gradJob = split ? Direction::BackwardWeight : Direction::Backward;
  for (auto [c, w] : llvm::enumerate(workers))
    for (auto [i, job] : llvm::enumerate(w.jobs)) {
      int64_t s = job.getStageIndex();
      owners[s].insert(job.getWeightsWorker().value_or(c));
      if (job.getDirection() != gradJob)
        continue;
      lastGradJob[s][c] = i;
      gradTime[s] = std::max(gradTime[s], *job.getEndTime());
    }
  SmallVector<Reduction> reductions;
  for (int64_t s = 0; s < numStages; ++s) {
    Reduction r{gradTime[s], s, {}, {}, {}};
    r.owners.assign(owners[s].begin(), owners[s].end());
    llvm::sort(r.owners);
    llvm::SmallDenseSet<int64_t, 8> members(owners[s].begin(),
                                            owners[s].end());
    for (auto &[worker, index] : lastGradJob[s])
      members.insert(worker);
    r.members.assign(members.begin(), members.end());
    llvm::sort(r.members);
    for (int64_t m : r.members) {
      const Worker &w = workers[m];
      auto last = lastGradJob[s].find(m);
      unsigned lo = last == lastGradJob[s].end() ? 0 : last->second + 1;
      r.at.push_back({m, w.firstAtOrAfter(r.time, lo, w.jobs.size())});
    }
    reductions.push_back(std::move(r));
  }
  // Every member meets collectives in one global (time, stage) order.
  llvm::sort(reductions, [](const Reduction &a, const Reduction &b) {
    return std::tie(a.time, a.stage) < std::tie(b.time, b.stage);
  });
  llvm::stable_sort(messages, [](const Message &a, const Message &b) {
    return std::tie(a.time, a.seq) < std::tie(b.time, b.seq);
  });
  for (auto [tag, m] : llvm::enumerate(messages))
    m.tag = tag;

  // Phase 2: number every worker's program. Every rank meets its
  // communication in one global order of keys (time, class, id): both ends
  // of a message share a key, as do all members of a collective, and
  // boundaries are monotone in time, so no rank can wait on a rank that
  // waits for something later (--sched-verify-deadlock-free checks it).
  // Releases come first at a boundary (they only free memory); runs of
  // consecutive point-to-point operations form one group.
  struct Entry {
    enum Kind { ReleaseOp, SendOp, RecvOp, CollectiveOp, StepOp } kind;
    unsigned index; // into releases / messages / reductions
    std::tuple<int64_t, int, int64_t> key;
    bool isPointToPoint() const { return kind == SendOp || kind == RecvOp; }
  };
  SmallVector<SmallVector<SmallVector<Entry>>> at(numWorkers);
  for (auto [c, w] : llvm::enumerate(workers))
    at[c].resize(w.jobs.size() + 1);
  for (auto [i, r] : llvm::enumerate(releases))
    at[r.worker][r.at].push_back(
        {Entry::ReleaseOp, unsigned(i), {std::numeric_limits<int64_t>::min(), 0, r.stage}});
  for (auto [i, m] : llvm::enumerate(messages)) {
    std::tuple<int64_t, int, int64_t> key{m.time, 1, m.tag};
    at[m.sender][m.senderAt].push_back({Entry::SendOp, unsigned(i), key});
    at[m.receiver][m.receiverAt].push_back({Entry::RecvOp, unsigned(i), key});
  }
  for (auto [i, r] : llvm::enumerate(reductions)) {
    for (auto [member, boundary] : r.at) {
      if (r.members.size() > 1)
        at[member][boundary].push_back(
            {Entry::CollectiveOp, unsigned(i), {r.time, 2, r.stage}});
      if (llvm::is_contained(r.owners, member))
        at[member][boundary].push_back(
            {Entry::StepOp, unsigned(i), {r.time, 3, r.stage}});
    }
  }

  // Orders, tags, stages and peers repeat across ops: intern each integer
  // attribute once instead of going through the uniquer per op.
  Builder attrs(ctx);
  SmallVector<IntegerAttr> interned;
  auto i64 = [&](int64_t v) {
    if (v < 0 || v >= (int64_t(1) << 20))
      return attrs.getI64IntegerAttr(v);
    if (static_cast<size_t>(v) >= interned.size())
      interned.resize(v + 1);
    if (!interned[v])
      interned[v] = attrs.getI64IntegerAttr(v);
    return interned[v];
  };
  SmallVector<Slot> sendSlot(messages.size()), recvSlot(messages.size());
  SmallVector<Slot> releaseSlot(releases.size());
  SmallVector<llvm::SmallDenseMap<int64_t, Slot, 4>> collectiveSlot(
      reductions.size()),
      stepSlot(reductions.size());
  for (auto [c, w] : llvm::enumerate(workers)) {
    int64_t order = 0, groups = 0;
    for (unsigned b = 0; b <= w.jobs.size(); ++b) {
      SmallVector<Entry> &entries = at[c][b];
      llvm::sort(entries, [](const Entry &x, const Entry &y) {
        return x.key < y.key;
      });
      for (size_t e = 0; e < entries.size();) {
        // A run of point-to-point operations of length > 1 is a group.
        size_t end = e + 1;
        while (entries[e].isPointToPoint() && end < entries.size() &&
               entries[end].isPointToPoint())
          ++end;
        std::optional<int64_t> group;
        if (end - e > 1)
          group = groups++;
        for (; e < end; ++e) {
          const Entry &entry = entries[e];
          switch (entry.kind) {
          case Entry::ReleaseOp:
            releaseSlot[entry.index] = {order++, std::nullopt};
            break;
          case Entry::SendOp:
            sendSlot[entry.index] = {order++, group};
            break;
          case Entry::RecvOp:
            recvSlot[entry.index] = {order++, group};
            break;
          case Entry::CollectiveOp:
            collectiveSlot[entry.index][c] = {order++, std::nullopt};
            break;
          case Entry::StepOp:
            stepSlot[entry.index][c] = {order++, std::nullopt};
            break;
          }
        }
      }
      if (b < w.jobs.size())
        w.jobs[b].setOrderIndex(i64(order++));
    }
  }

  // Phase 3: create the ops.
  auto groupAttr = [&](const Slot &slot) {
    return slot.group ? i64(*slot.group) : IntegerAttr();
  };
  OpBuilder builder(ctx);
  Block &body = step.getBody().front();
  TensorKindAttr kindAttr[] = {
      TensorKindAttr::get(ctx, TensorKind::Activation),
      TensorKindAttr::get(ctx, TensorKind::Gradient)};
  int64_t actBytes = cost.getActBytes(), weightBytes = cost.getWeightBytes();
  for (auto [i, m] : llvm::enumerate(messages)) {
    const Slot &send = sendSlot[i], &recv = recvSlot[i];
    if (m.kind == MessageKind::Weights) {
      builder.setInsertionPointToEnd(&body);
      SendWeightsOp::create(builder, m.loc, i64(m.stage), i64(m.receiver),
                            i64(m.tag), i64(weightBytes), i64(m.sender),
                            i64(send.order), groupAttr(send));
      FetchWeightsOp::create(builder, m.loc, i64(m.stage), i64(m.sender),
                             i64(m.tag), i64(weightBytes), i64(m.receiver),
                             i64(recv.order), groupAttr(recv));
      continue;
    }
    // Right after the producer: the send reads the value, the receive
    // dominates every consumer.
    builder.setInsertionPointAfterValue(m.value);
    TensorKindAttr kind = kindAttr[static_cast<unsigned>(m.tensor)];
    auto recvOp = RecvOp::create(
        builder, m.loc, sched::TensorType::get(ctx), m.value, kind, i64(m.stage),
        i64(m.microbatch), i64(m.sender), i64(m.tag), i64(actBytes),
        i64(m.receiver), i64(recv.order), groupAttr(recv));
    SendOp::create(builder, m.loc, m.value, kind, i64(m.stage),
                   i64(m.microbatch), i64(m.receiver), i64(m.tag),
                   i64(actBytes), i64(m.sender), i64(send.order),
                   groupAttr(send));
    int64_t receiver = m.receiver;
    m.value.replaceUsesWithIf(recvOp.getOutput(), [&](OpOperand &use) {
      auto job = dyn_cast<JobOpInterface>(use.getOwner());
      return job && job.getComputeWorker() == receiver;
    });
  }
  builder.setInsertionPointToEnd(&body);
  for (auto [i, r] : llvm::enumerate(releases))
    ReleaseWeightsOp::create(builder, step.getLoc(), i64(r.stage),
                             i64(r.worker), i64(releaseSlot[i].order),
                             IntegerAttr());
  for (auto [i, r] : llvm::enumerate(reductions)) {
    auto members = attrs.getDenseI64ArrayAttr(r.members);
    for (auto [member, slot] : collectiveSlot[i]) {
      if (r.owners.size() == 1)
        ReduceGradOp::create(builder, step.getLoc(), i64(r.stage),
                             i64(r.owners.front()), members, i64(weightBytes),
                             i64(member), i64(slot.order), IntegerAttr());
      else
        AllReduceGradOp::create(builder, step.getLoc(), i64(r.stage), members,
                                i64(weightBytes), i64(member), i64(slot.order),
                                IntegerAttr());
    }
    for (auto [member, slot] : stepSlot[i])
      OptimizerStepOp::create(builder, step.getLoc(), i64(r.stage),
                              i64(member), i64(slot.order), IntegerAttr());
  }
}
