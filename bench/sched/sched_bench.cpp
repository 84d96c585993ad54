// The dialect-free core of the compiler, timed in process with Google
// Benchmark (bench/run, table "In process"): the list scheduler
// (scheduling::simulate) and the communication planner
// (scheduling::planCommunication) on 1F1B steps of about 10^4, 10^5 and
// 10^6 jobs, S = W = 64. The graphs are built here in C++, as the
// --sched-simulate and --pipeline-lower adapters would build them from the
// IR (same edges, priorities and caps), so that what is timed is the
// algorithm alone, without MLIR. Each benchmark reports `jobs` and
// `ns_per_job`.
#include "pipesched/Scheduling/CommPlan.h"
#include "pipesched/Scheduling/ListScheduler.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace pipesched::scheduling;

namespace {

constexpr int64_t kStages = 64, kWorkers = 64;

// A 1F1B step: jobs listed microbatch by microbatch, forwards then
// backwards (the order of --sched-expand), durations fwd = 1, bwd = 2,
// backward_first priority (1 - d, b, p) flattened to one integer, a
// forward holding one activation until its backward, and 1F1B's cap
// S/W * (W - w) (docs/strategies.md).
struct Step {
  JobGraph graph;
  SimulationOptions options;
  std::vector<uint32_t> forward, backward; // index by b * S + s
};

Step build1F1B(int64_t B) {
  const int64_t S = kStages, W = kWorkers, perWorker = S / W;
  Step st;
  st.graph.numWorkers = int32_t(W);
  st.graph.jobs.reserve(size_t(2 * S * B));
  st.forward.assign(size_t(S * B), 0);
  st.backward.assign(size_t(S * B), 0);
  std::vector<uint32_t> preds;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t s = 0; s < S; ++s) {
      Job j;
      j.worker = int32_t(s / perWorker);
      j.duration = 1;
      j.priority = (1 * B + b) * 2 * S + s;
      j.acquire = 1;
      preds.clear();
      if (s > 0)
        preds.push_back(st.forward[size_t(b * S + s - 1)]);
      st.forward[size_t(b * S + s)] = st.graph.addJob(j, preds);
    }
    for (int64_t s = S - 1; s >= 0; --s) {
      Job j;
      j.worker = int32_t(s / perWorker);
      j.duration = 2;
      j.priority = (0 * B + b) * 2 * S + (2 * S - 1 - s);
      j.releases = st.forward[size_t(b * S + s)];
      preds.clear();
      // The gradient from above (the last stage: its own forward's output)
      // and the stage's input activation (none for stage 0: the data).
      preds.push_back(s == S - 1 ? st.forward[size_t(b * S + s)]
                                 : st.backward[size_t(b * S + s + 1)]);
      if (s > 0)
        preds.push_back(st.forward[size_t(b * S + s - 1)]);
      st.backward[size_t(b * S + s)] = st.graph.addJob(j, preds);
    }
  }
  for (int64_t w = 0; w < W; ++w)
    st.options.memoryCap.push_back(perWorker * (W - w));
  return st;
}

// Microbatches for about `jobs` jobs: 2 * S * B of them.
int64_t microbatchesFor(int64_t jobs) { return jobs / (2 * kStages); }

void report(benchmark::State &state, int64_t jobs) {
  state.counters["jobs"] = double(jobs);
  // Per job and per iteration: the inverted rate of jobs processed.
  state.counters["ns_per_job"] = benchmark::Counter(
      double(jobs) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                               benchmark::Counter::kInvert);
}

void BM_Simulate1F1B(benchmark::State &state) {
  Step st = build1F1B(microbatchesFor(state.range(0)));
  for (auto _ : state) {
    SimulationResult r = simulate(st.graph, st.options);
    if (!r.timeline) {
      state.SkipWithError(r.error.c_str());
      return;
    }
    benchmark::DoNotOptimize(r.timeline->makespan);
  }
  report(state, int64_t(st.graph.jobs.size()));
}

// The planner's input: the simulated step with its data edges (the same
// edges as the graph's predecessors) and its weights on the compute worker.
CommProblem problemOf(const Step &st, const Timeline &t) {
  const int64_t S = kStages;
  CommProblem p;
  p.numWorkers = st.graph.numWorkers;
  p.numStages = S;
  p.actBytes = 4096;
  p.weightBytes = 65536;
  p.inputBegin.push_back(0);
  for (size_t i = 0; i < st.graph.jobs.size(); ++i) {
    const Job &j = st.graph.jobs[i];
    PlannedJob pj;
    pj.worker = pj.owner = j.worker;
    // Jobs come in blocks of 2S per microbatch: S forwards, S backwards.
    int64_t b = int64_t(i) / (2 * S), k = int64_t(i) % (2 * S);
    pj.microbatch = b;
    pj.stage = k < S ? k : 2 * S - 1 - k;
    pj.direction = k < S ? Direction::Forward : Direction::Backward;
    pj.start = t.start[i];
    pj.end = t.end[i];
    pj.position = t.position[i];
    p.jobs.push_back(pj);
    for (uint32_t e = st.graph.predBegin[i]; e < st.graph.predBegin[i + 1]; ++e)
      p.inputs.push_back(st.graph.preds[e]);
    p.inputBegin.push_back(uint32_t(p.inputs.size()));
  }
  return p;
}

void BM_PlanCommunication1F1B(benchmark::State &state) {
  Step st = build1F1B(microbatchesFor(state.range(0)));
  SimulationResult r = simulate(st.graph, st.options);
  if (!r.timeline) {
    state.SkipWithError(r.error.c_str());
    return;
  }
  CommProblem problem = problemOf(st, *r.timeline);
  if (std::string why = problem.check(); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  // Once, untimed: the plan of this hand-built input passes the checks the
  // lowering runs (every input local where consumed, deadlock-free), so
  // what is timed is the planner on a real schedule.
  if (std::string why = planCommunication(problem).verify(problem); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  for (auto _ : state) {
    CommPlan plan = planCommunication(problem);
    benchmark::DoNotOptimize(plan.messages.data());
  }
  report(state, int64_t(problem.jobs.size()));
}

} // namespace

// 10^4, 10^5, 10^6 jobs (rounded down to whole microbatches).
BENCHMARK(BM_Simulate1F1B)
    ->Arg(10000)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanCommunication1F1B)
    ->Arg(10000)->Arg(100000)->Arg(1000000)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
