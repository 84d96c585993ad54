//===- VShapeGreedy.cpp - V-Min and V-Half by greedy reordering -----------===//
//
// See VShapeGreedy.h for the algorithm and its reference.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/VShapeGreedy.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

using namespace pipesched::scheduling;

namespace {

/// Job types on a rank, in the reference's numbering: forwards of chunk 0
/// and 1, input halves of chunk 1 and 0 (the V turns at chunk 1), weight
/// halves of chunk 1 and 0. Before the final split a single weight list
/// (TypeW) holds the weight halves of both chunks in backward order.
enum : int { TypeF = 0, Typef = 1, TypeB = 2, Typeb = 3, TypeW = 4, Typew = 5 };

/// Slot of every job, one increasing list per (rank, type): m jobs of each
/// type, but 2m in a single weight list (types 4, 5 or 6).
struct Plan {
  int64_t ranks = 0, types = 0, micro = 0;
  std::vector<std::vector<int64_t>> lists;

  Plan(int64_t numRanks, int64_t numTypes, int64_t numMicro)
      : ranks(numRanks), types(numTypes), micro(numMicro),
        lists(size_t(numRanks * numTypes)) {
    for (int64_t r = 0; r < ranks; ++r)
      for (int64_t t = 0; t < types; ++t)
        list(r, t).assign(size_t(types == 5 && t == TypeW ? 2 * micro : micro),
                          0);
  }
  std::vector<int64_t> &list(int64_t r, int64_t t) {
    return lists[size_t(r * types + t)];
  }
  const std::vector<int64_t> &list(int64_t r, int64_t t) const {
    return lists[size_t(r * types + t)];
  }
  int64_t &at(int64_t r, int64_t t, int64_t k) { return list(r, t)[size_t(k)]; }
  int64_t at(int64_t r, int64_t t, int64_t k) const {
    return list(r, t)[size_t(k)];
  }
  /// One past the rank's last occupied slot.
  int64_t end(int64_t r) const {
    int64_t last = 0;
    for (int64_t t = 0; t < types; ++t)
      last = std::max(last, list(r, t).back());
    return last + 1;
  }
};

struct Job {
  int64_t slot, rank, type, mb;
  bool operator<(const Job &o) const {
    return std::tie(slot, rank, type, mb) <
           std::tie(o.slot, o.rank, o.type, o.mb);
  }
};

/// Every job by (slot, rank, type, microbatch): the order the reference's
/// repeated minimum over list heads visits them in, since each list is
/// increasing and only the visited job ever moves (earlier).
std::vector<Job> visitOrder(const Plan &plan) {
  std::vector<Job> jobs;
  jobs.reserve(size_t(plan.ranks * plan.types * plan.micro) +
               (plan.types == 5 ? size_t(plan.ranks * plan.micro) : 0));
  for (int64_t r = 0; r < plan.ranks; ++r)
    for (int64_t t = 0; t < plan.types; ++t)
      for (size_t k = 0; k < plan.list(r, t).size(); ++k)
        jobs.push_back({plan.list(r, t)[k], r, t, int64_t(k)});
  std::sort(jobs.begin(), jobs.end());
  return jobs;
}

/// Step 1: microbatch k's block at 6k.
Plan buildingBlock(int64_t p, int64_t m, VShapeMemory memory) {
  Plan plan(p, 4, m);
  for (int64_t r = 0; r < p; ++r) {
    int64_t offset[4];
    if (memory == VShapeMemory::Min) {
      int64_t g = p % 3 == 0 ? 2 : 0;
      offset[0] = r, offset[1] = 2 * p - r - 1, offset[2] = 2 * p + g + r,
      offset[3] = 4 * p + g - r - 1;
    } else {
      int64_t g = p % 2 == 0 ? 3 : 0;
      offset[0] = 2 * r, offset[1] = 3 * p - r - 2,
      offset[2] = 3 * p + g + 2 * r - 1, offset[3] = 6 * p + g - r - 2;
    }
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t k = 0; k < m; ++k)
        plan.at(r, t, k) = offset[t] + 6 * k;
  }
  return plan;
}

/// The type occupying each slot of rank r, -1 where free, over `length`
/// slots.
std::vector<int> slotTypes(const Plan &plan, int64_t r, int64_t length) {
  std::vector<int> type(size_t(length), -1);
  for (int64_t t = 0; t < plan.types; ++t)
    for (int64_t s : plan.list(r, t))
      if (s < length)
        type[size_t(s)] = int(t);
  return type;
}

/// Steps 2 and 5: the weight halves of a 4-type plan into the free slots,
/// oldest pending backward first (`split`: chunk 1's before chunk 0's, in
/// two lists). Weights left at the end take the slots after the last job.
Plan insertWeights(const Plan &plan, bool split) {
  int64_t m = plan.micro;
  Plan out(plan.ranks, split ? 6 : 5, m);
  for (int64_t r = 0; r < plan.ranks; ++r) {
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t k = 0; k < m; ++k)
        out.at(r, t, k) = plan.at(r, t, k);
    int64_t bound = plan.end(r) - 1;
    std::vector<int> type = slotTypes(plan, r, bound + 1);
    int64_t pending[2] = {0, 0}, placed[2] = {0, 0};
    auto place = [&](int kind, int64_t s) {
      out.at(r, TypeW + kind, placed[kind]++) = s;
      --pending[kind];
    };
    for (int64_t i = 0; i <= bound; ++i) {
      int t = type[size_t(i)];
      if (t == TypeB || t == Typeb)
        ++pending[split ? t - TypeB : 0];
      else if (t < 0)
        for (int kind = 0; kind < 2; ++kind)
          if (pending[kind]) {
            place(kind, i);
            break;
          }
    }
    int64_t i = bound;
    for (int kind = 0; kind < 2; ++kind)
      while (pending[kind] > 0)
        place(kind, ++i);
  }
  return out;
}

/// "Squeeze": a unit-cost list schedule in visit order, each job starting
/// once its dependencies and its rank's previous job have ended. Returns
/// the start slots.
Plan squeeze(const Plan &plan) {
  int64_t p = plan.ranks, m = plan.micro;
  Plan end(p, plan.types, m);
  std::vector<int64_t> rankEnd(size_t(p), 0);
  for (const Job &j : visitOrder(plan)) {
    int64_t ready = rankEnd[size_t(j.rank)];
    if ((j.type == TypeF || j.type == TypeB) && j.rank > 0)
      ready = std::max(ready, end.at(j.rank - 1, j.type, j.mb));
    if ((j.type == Typef || j.type == Typeb) && j.rank + 1 < p)
      ready = std::max(ready, end.at(j.rank + 1, j.type, j.mb));
    if (j.type > TypeF && j.type < TypeW)
      ready = std::max(ready, end.at(j.rank, j.type - 1, j.mb));
    if (j.mb > 0)
      ready = std::max(ready, end.at(j.rank, j.type, j.mb - 1));
    end.at(j.rank, j.type, j.mb) = ready + 1;
    rankEnd[size_t(j.rank)] = ready + 1;
  }
  for (std::vector<int64_t> &list : end.lists)
    for (int64_t &s : list)
      --s;
  return end;
}

/// The slot a job may not precede: one after the latest of its
/// dependencies at their current slots.
int64_t earliestSlot(const Plan &plan, const Job &j) {
  int64_t d = -1;
  if ((j.type == TypeF || j.type == TypeB) && j.rank > 0)
    d = std::max(d, plan.at(j.rank - 1, j.type, j.mb));
  if ((j.type == Typef || j.type == Typeb) && j.rank + 1 < plan.ranks)
    d = std::max(d, plan.at(j.rank + 1, j.type, j.mb));
  if (j.type > TypeF && j.type < TypeW)
    d = std::max(d, plan.at(j.rank, j.type - 1, j.mb));
  if (j.type == TypeW) {
    // The mb-th weight follows the mb-th backward of either chunk: the
    // (mb+1)-th smallest of two increasing lists, by bisection.
    auto b1 = [&](int64_t i) { return plan.at(j.rank, TypeB, i); };
    auto b0 = [&](int64_t i) { return plan.at(j.rank, Typeb, i); };
    int64_t want = j.mb + 1, m = plan.micro;
    int64_t lo = std::max<int64_t>(0, want - m), hi = std::min(want, m);
    while (lo < hi) { // i from B, want - i from b
      int64_t i = (lo + hi) / 2;
      if (want - i > 0 && i < m && b0(want - i - 1) > b1(i))
        lo = i + 1;
      else
        hi = i;
    }
    int64_t i = lo, kth = std::numeric_limits<int64_t>::min();
    if (i > 0)
      kth = std::max(kth, b1(i - 1));
    if (want - i > 0)
      kth = std::max(kth, b0(want - i - 1));
    d = std::max(d, kth);
  }
  if (j.mb > 0)
    d = std::max(d, plan.at(j.rank, j.type, j.mb - 1));
  return d + 1;
}

/// The free slots of a rank: the first free slot at or after a given one
/// in near-constant time (union-find over taken slots). A slot becomes
/// taken once its job has been visited; slot `length` stays free.
class FreeSlots {
public:
  explicit FreeSlots(int64_t length) : next(size_t(length) + 1) {
    for (size_t i = 0; i < next.size(); ++i)
      next[i] = int64_t(i);
  }
  int64_t firstFrom(int64_t s) {
    while (next[size_t(s)] != s) {
      next[size_t(s)] = next[size_t(next[size_t(s)])];
      s = next[size_t(s)];
    }
    return s;
  }
  void take(int64_t s) { next[size_t(s)] = s + 1; }

private:
  std::vector<int64_t> next;
};

/// Activation of a rank whose weights are jobs: the level after each slot
/// is the running sum of F, f +1 and W -1. A max segment tree with lazy
/// additions, since a moved job shifts the level of every slot it skips.
/// Levels stay within [-2m, 2m] (m <= 2^20).
class ExplicitMemory {
public:
  ExplicitMemory(const Plan &plan, int64_t r, int64_t length) {
    while (size < length)
      size *= 2;
    top.assign(2 * size_t(size), std::numeric_limits<int32_t>::min() / 2);
    add.assign(2 * size_t(size), 0);
    std::vector<int> type = slotTypes(plan, r, length);
    int32_t level = 0;
    for (int64_t i = 0; i < length; ++i) {
      level += delta(type[size_t(i)]);
      top[size_t(size + i)] = level;
    }
    for (int64_t n = size - 1; n >= 1; --n)
      top[size_t(n)] = std::max(top[size_t(2 * n)], top[size_t(2 * n + 1)]);
  }
  static int32_t delta(int t) {
    return t == TypeF || t == Typef ? 1 : t == TypeW ? -1 : 0;
  }
  /// The peak as the reference counts it (from 0).
  int64_t peak() const { return std::max<int64_t>(0, top[1]); }
  /// The job of type t moves from slot `now` to `to` < now.
  void move(int t, int64_t to, int64_t now) {
    if (delta(t))
      addRange(1, 0, size, to, now, delta(t));
  }
  /// The last slot of [lo, hi) whose level is at least `bound`, or -1.
  int64_t lastAtLeast(int64_t lo, int64_t hi, int64_t bound) const {
    return find(1, 0, size, lo, hi, bound);
  }

private:
  // top[n] = max over n's slots, counting the additions at n and below.
  int64_t size = 1;
  std::vector<int32_t> top, add;

  void addRange(int64_t n, int64_t l, int64_t r, int64_t lo, int64_t hi,
                int32_t v) {
    if (hi <= l || r <= lo)
      return;
    if (lo <= l && r <= hi) {
      top[size_t(n)] += v;
      add[size_t(n)] += v;
      return;
    }
    int64_t mid = (l + r) / 2;
    addRange(2 * n, l, mid, lo, hi, v);
    addRange(2 * n + 1, mid, r, lo, hi, v);
    top[size_t(n)] =
        std::max(top[size_t(2 * n)], top[size_t(2 * n + 1)]) + add[size_t(n)];
  }
  // `bound` is relative to the additions above n.
  int64_t find(int64_t n, int64_t l, int64_t r, int64_t lo, int64_t hi,
               int64_t bound) const {
    if (hi <= l || r <= lo || top[size_t(n)] < bound)
      return -1;
    if (r - l == 1)
      return l;
    int64_t mid = (l + r) / 2;
    bound -= add[size_t(n)];
    int64_t right = find(2 * n + 1, mid, r, lo, hi, bound);
    return right >= 0 ? right : find(2 * n, l, mid, lo, hi, bound);
  }
};

/// Activation of a rank without weight jobs: the reference counts them as
/// step 2 would insert them (a free slot retires one pending backward's
/// activation). `before[i]` caches the walk's state on reaching slot i, so
/// a candidate move replays from its slot only until the walk meets the
/// cached one again past the vacated slot. Counts stay within 2m.
class ImplicitMemory {
public:
  ImplicitMemory(const Plan &plan, int64_t r, int64_t length)
      : type(slotTypes(plan, r, length)), before(size_t(length) + 1) {
    for (size_t i = 0; i < type.size(); ++i) {
      before[i + 1] = step(before[i], type[i]);
      top = std::max<int64_t>(top, before[i + 1].level);
    }
  }
  int64_t peak() const { return top; }
  /// Whether the job of type t, moved from slot `now` to the free slot
  /// `to` < now, keeps every level at or below `budget`. The slots before
  /// `to` are unchanged, and the levels of the rank as it stands never
  /// exceed the budget, so only the replayed ones need checking.
  bool fits(int t, int64_t to, int64_t now, int64_t budget) const {
    State s = before[size_t(to)];
    for (int64_t i = to; i < int64_t(type.size()); ++i) {
      if (i > now && s == before[size_t(i)])
        return true;
      s = step(s, i == to ? t : i == now ? -1 : type[size_t(i)]);
      if (s.level > budget)
        return false;
    }
    return true;
  }
  void move(int t, int64_t to, int64_t now) {
    type[size_t(to)] = t;
    type[size_t(now)] = -1;
    for (int64_t i = to; i < int64_t(type.size()); ++i) {
      State s = step(before[size_t(i)], type[size_t(i)]);
      if (i >= now && s == before[size_t(i + 1)])
        break;
      before[size_t(i + 1)] = s;
    }
  }

private:
  struct State {
    int32_t level = 0, pending = 0;
    bool operator==(const State &o) const {
      return level == o.level && pending == o.pending;
    }
  };
  std::vector<int> type;
  std::vector<State> before;
  int64_t top = 0;

  static State step(State s, int t) {
    if (t == TypeF || t == Typef) {
      ++s.level;
    } else if (t == TypeB || t == Typeb) {
      ++s.pending;
    } else if (t < 0 && s.pending) {
      --s.level;
      --s.pending;
    }
    return s;
  }
};

/// Steps 3 and 4 (the reference's `reorder`), then squeeze. A job outside
/// the steady phase takes the first free slot from its earliest one on
/// that keeps its rank's peak within the building block's.
Plan reorder(Plan plan, bool withWeights) {
  if (withWeights)
    plan = insertWeights(plan, /*split=*/false);
  int64_t p = plan.ranks, m = plan.micro;
  std::vector<FreeSlots> free;
  std::vector<ExplicitMemory> explicitMem;
  std::vector<ImplicitMemory> implicitMem;
  int64_t budget = 0;
  for (int64_t r = 0; r < p; ++r) {
    int64_t length = plan.end(r);
    free.emplace_back(length);
    if (withWeights) {
      explicitMem.emplace_back(plan, r, length);
      budget = std::max(budget, explicitMem.back().peak());
    } else {
      implicitMem.emplace_back(plan, r, length);
      budget = std::max(budget, implicitMem.back().peak());
    }
  }

  enum { WarmUp, Steady, CoolDown } phase = WarmUp;
  for (const Job &j : visitOrder(plan)) {
    int64_t now = j.slot;
    FreeSlots &slots = free[size_t(j.rank)];
    if (j.type == Typeb && j.rank == 0 && phase == WarmUp)
      phase = Steady;
    bool keep = phase == Steady || (phase == WarmUp && !withWeights);
    if (phase == Steady && j.type == TypeF && j.mb == m - 1)
      phase = CoolDown;
    if (keep) {
      slots.take(now);
      continue;
    }
    int64_t from = earliestSlot(plan, j);
    int64_t to = now;
    if (withWeights) {
      // A forward raises the level of the slots it skips, so it may start
      // no earlier than after the last slot already at the budget; other
      // jobs never raise it.
      ExplicitMemory &mem = explicitMem[size_t(j.rank)];
      if (j.type == TypeF || j.type == Typef)
        from = std::max(from, mem.lastAtLeast(from, now, budget) + 1);
      to = std::min(now, slots.firstFrom(from));
      if (to < now)
        mem.move(int(j.type), to, now);
    } else {
      ImplicitMemory &mem = implicitMem[size_t(j.rank)];
      for (int64_t s = slots.firstFrom(from); s < now;
           s = slots.firstFrom(s + 1))
        if (mem.fits(int(j.type), s, now, budget)) {
          to = s;
          mem.move(int(j.type), to, now);
          break;
        }
    }
    plan.at(j.rank, j.type, j.mb) = to;
    slots.take(to);
  }
  if (!withWeights)
    plan = insertWeights(plan, /*split=*/false);
  return squeeze(plan);
}

/// The first four types of a plan.
Plan dropWeights(const Plan &plan) {
  Plan out(plan.ranks, 4, plan.micro);
  for (int64_t r = 0; r < plan.ranks; ++r)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t k = 0; k < plan.micro; ++k)
        out.at(r, t, k) = plan.at(r, t, k);
  return out;
}

} // namespace

std::string pipesched::scheduling::checkVShapeGreedy(int64_t p, int64_t m,
                                                     VShapeMemory memory) {
  (void)memory;
  if (p < 1)
    return "the V schedules need at least one rank (p = " + std::to_string(p) +
           ")";
  if (m < 1)
    return "the V schedules need at least one microbatch (m = " +
           std::to_string(m) + ")";
  // Every rank keeps tables over the whole step's slots, about 6(p + m)
  // of them, beside the 6pm jobs: p * (p + m) <= 2^21 keeps the whole
  // under about a gigabyte and the levels within 32 bits.
  if (p > (int64_t(1) << 20) || m > (int64_t(1) << 20) ||
      p * (p + m) > (int64_t(1) << 21))
    return "p = " + std::to_string(p) + ", m = " + std::to_string(m) +
           " is too large for the V schedules' slot tables (p * (p + m) "
           "must not exceed 2^21)";
  return "";
}

WorkerOrders pipesched::scheduling::vShapeGreedy(int64_t p, int64_t m,
                                                 VShapeMemory memory) {
  if (!checkVShapeGreedy(p, m, memory).empty())
    return {};
  Plan first = reorder(buildingBlock(p, m, memory), /*withWeights=*/true);
  Plan second = reorder(dropWeights(first), /*withWeights=*/false);
  Plan slots = insertWeights(dropWeights(second), /*split=*/true);

  WorkerOrders orders(static_cast<size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    std::vector<std::tuple<int64_t, int, int64_t>> jobs;
    for (int t = 0; t < 6; ++t)
      for (int64_t k = 0; k < m; ++k)
        jobs.emplace_back(slots.at(r, t, k), t, k);
    std::sort(jobs.begin(), jobs.end());
    int64_t low = r, high = 2 * p - 1 - r;
    static const Direction direction[6] = {
        Direction::Forward,        Direction::Forward,
        Direction::Backward,       Direction::Backward,
        Direction::BackwardWeight, Direction::BackwardWeight};
    // F, b and w belong to chunk 0 (stage r), f, B and W to chunk 1.
    static const bool chunkOne[6] = {false, true, true, false, true, false};
    std::vector<JobCoord> &out = orders[size_t(r)];
    out.reserve(jobs.size());
    for (const auto &[slot, t, k] : jobs)
      out.push_back({chunkOne[t] ? high : low, k, direction[t]});
  }
  return orders;
}
