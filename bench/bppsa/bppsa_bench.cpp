// BPPSA against back-propagation on this CPU (docs/bppsa.md, "Measured").
//
// For each (S, H): a chain of S built-in MLP stages (one Linear + GELU of
// width H, `rows` rows), one microbatch's backward
//   - by back-propagation: the S stage backwards in sequence (input and
//     weight gradients), timed;
//   - by BPPSA: the scan graph of lib/Scheduling/Bppsa (dense Jacobians),
//     run by runBppsa on one thread, every job timed; the sum is BPPSA's
//     work;
//   - calibrated on W workers: the scan graph with the measured durations,
//     list-scheduled (lib/Scheduling/ListScheduler) with stages in contiguous
//     blocks over W workers and products where their newest operand is:
//     what W workers without communication cost would take;
//   - calibrated critical path: the longest path through the measured
//     durations, what unboundedly many workers would take;
//   - modelled: the algorithm layer's critical path and sequential path in
//     its cost units.
// Each measured figure is the median of `reps` runs. Prints a Markdown
// table; --csv FILE writes the same rows as CSV.
#include "model/bppsa_exec.h"
#include "model/mlp_stage.h"

#include "pipesched/Scheduling/ListScheduler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace pipesched::runtime;
using namespace pipesched::scheduling;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Point {
  int64_t S, H;
  double sequential = 0, work = 0, calibrated = 0, critical = 0; // seconds
  int64_t modelCritical = 0, modelSequential = 0;
};

// The MLP's S stages of width H: parameters, each stage's input on one
// batch of `rows`, and a loss gradient.
struct Stages {
  pipesched_stage_config c;
  std::vector<std::vector<float>> params, inputs;
  std::vector<float> lossGradient, ws;
};

Stages makeStages(int64_t S, int64_t H, int64_t rows) {
  const pipesched_stage_api *api = builtinMlpApi();
  Stages m{{PIPESCHED_STAGE_ABI_VERSION, 0, int32_t(S), H, 1, 1}, {}, {}, {}, {}};
  std::mt19937 rng(uint32_t(S * 7 + H));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(rows * H));
  for (float &v : x)
    v = normal(rng);
  for (int64_t s = 0; s < S; ++s) {
    m.c.stage = int32_t(s);
    std::vector<float> p(size_t(api->num_params(&m.c)));
    api->init(&m.c, p.data());
    m.params.push_back(p);
    m.inputs.push_back(x);
    m.ws.resize(size_t(api->workspace_floats(&m.c, rows)));
    std::vector<float> y(x.size());
    api->forward(&m.c, p.data(), rows, x.data(), y.data(), m.ws.data());
    x = y;
  }
  m.lossGradient.resize(x.size());
  for (float &v : m.lossGradient)
    v = normal(rng);
  return m;
}

// Back-propagation's median time; run -1 warms the caches and the
// allocator up and is not recorded.
double timeBackprop(Stages &m, int64_t S, int64_t rows, int reps) {
  const pipesched_stage_api *api = builtinMlpApi();
  std::vector<double> times;
  std::vector<std::vector<float>> grads(static_cast<size_t>(S));
  for (int r = -1; r < reps; ++r) {
    for (int64_t s = 0; s < S; ++s)
      grads[size_t(s)].assign(m.params[size_t(s)].size(), 0.0f);
    std::vector<float> g = m.lossGradient, gin(g.size());
    auto t0 = Clock::now();
    for (int64_t s = S - 1; s >= 0; --s) {
      m.c.stage = int32_t(s);
      api->backward(&m.c, m.params[size_t(s)].data(), rows, m.inputs[size_t(s)].data(),
                    g.data(), s > 0 ? gin.data() : nullptr, grads[size_t(s)].data(),
                    m.ws.data());
      g.swap(gin);
    }
    if (r >= 0)
      times.push_back(seconds(t0, Clock::now()));
  }
  return median(times);
}

// BPPSA's shape: stages in contiguous blocks over the workers.
BppsaShape scanShape(int64_t S, int64_t H, int64_t rows, int64_t W) {
  BppsaShape shape;
  shape.stages = S;
  shape.workers = W;
  shape.width = H;
  shape.rows = rows;
  shape.macsPerUnit = rows * H * H; // one unit: a dense JV of a stage
  for (int64_t s = 0; s < S; ++s)
    shape.stageWorker.push_back(s * W / S);
  if (std::string e = checkBppsa(shape); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    std::exit(1);
  }
  return shape;
}

// Runs the scan reps times (and once to warm up): each job's durations,
// and the median total work.
double timeScanJobs(const BppsaShape &shape, const BppsaGraph &graph, Stages &m,
                    int reps, std::vector<std::vector<double>> &jobTimes) {
  jobTimes.assign(graph.jobs.size(), {});
  std::vector<double> works, lastRun;
  for (int r = -1; r < reps; ++r) {
    runBppsa(shape, graph, m.c, Activation::Gelu, bppsa::Storage::Dense, m.params,
             m.inputs, m.lossGradient, &lastRun);
    if (r < 0)
      continue;
    double work = 0;
    for (size_t i = 0; i < lastRun.size(); ++i) {
      jobTimes[i].push_back(lastRun[i]);
      work += lastRun[i];
    }
    works.push_back(work);
  }
  return median(works);
}

// The longest path through the measured durations (jobs are listed in a
// topological order).
double measuredCriticalPath(const BppsaGraph &graph,
                            const std::vector<std::vector<double>> &jobTimes) {
  std::vector<double> finish(graph.jobs.size(), 0.0);
  double critical = 0;
  for (size_t i = 0; i < graph.jobs.size(); ++i) {
    double start = 0;
    for (uint32_t in : graph.jobs[i].inputs)
      start = std::max(start, finish[in]);
    finish[i] = start + median(jobTimes[i]);
    critical = std::max(critical, finish[i]);
  }
  return critical;
}

// The measured durations (ns), list-scheduled on W workers: seconds.
double listScheduled(const BppsaGraph &graph,
                     const std::vector<std::vector<double>> &jobTimes, int64_t W) {
  JobGraph jg;
  jg.numWorkers = int32_t(W);
  jg.predBegin.assign(1, 0);
  for (size_t i = 0; i < graph.jobs.size(); ++i) {
    const BppsaJob &j = graph.jobs[i];
    Job job;
    job.worker = int32_t(j.worker);
    job.duration = int64_t(median(jobTimes[i]) * 1e9);
    job.priority = int64_t(i);
    jg.addJob(job, std::vector<uint32_t>(j.inputs.begin(), j.inputs.end()));
  }
  SimulationResult sim = simulate(jg);
  if (!sim.timeline) {
    std::fprintf(stderr, "simulation failed: %s\n", sim.error.c_str());
    std::exit(1);
  }
  return double(sim.timeline->makespan) * 1e-9;
}

Point measure(int64_t S, int64_t H, int64_t rows, int64_t W, int reps) {
  Stages m = makeStages(S, H, rows);
  Point pt{S, H};
  pt.sequential = timeBackprop(m, S, rows, reps);
  BppsaShape shape = scanShape(S, H, rows, W);
  BppsaGraph graph = buildBppsaScan(shape);
  BppsaMetrics metrics = measureBppsa(shape, graph);
  pt.modelCritical = metrics.criticalPath;
  pt.modelSequential = metrics.sequentialPath;
  std::vector<std::vector<double>> jobTimes;
  pt.work = timeScanJobs(shape, graph, m, reps, jobTimes);
  pt.critical = measuredCriticalPath(graph, jobTimes);
  pt.calibrated = listScheduled(graph, jobTimes, W);
  return pt;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  FILE *csv = nullptr;
  int64_t rows = 4, W = 8;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv = std::fopen(argv[++i], "w");
      if (!csv) {
        std::perror(argv[i]);
        return 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv FILE]\n", argv[0]);
      return 2;
    }
  }
  std::vector<int64_t> stages = {8, 16, 32, 64, 128, 256, 512, 1024};
  std::vector<int64_t> widths = {4, 16, 64};
  if (quick) {
    stages = {8, 16};
    widths = {4};
    reps = 3;
  }
  if (csv)
    std::fprintf(csv, "S,H,rows,W,backprop_us,bppsa_work_us,bppsa_w%lld_us,speedup_w%lld,"
                      "bppsa_critical_us,speedup_unbounded,model_critical,model_sequential\n",
                 (long long)W, (long long)W);
  std::printf("| S | H | back-propagation (us) | BPPSA work, 1 thread (us) | BPPSA on "
              "W = %lld, calibrated (us) | speedup on W = %lld | BPPSA critical path, "
              "calibrated (us) | speedup, unbounded W | model: critical path vs "
              "sequential (units) |\n|---|---|---|---|---|---|---|---|---|\n",
              (long long)W, (long long)W);
  for (int64_t H : widths)
    for (int64_t S : stages) {
      // The largest dense points take minutes of JJ products: fewer runs.
      const int r = H * H * H * S > (int64_t(1) << 26) ? 3 : reps;
      Point p = measure(S, H, rows, W, r);
      const double speedup = p.sequential / p.calibrated;
      const double unbounded = p.sequential / p.critical;
      auto bold = [](double x) { return x > 1 ? "**" : ""; };
      if (csv)
        std::fprintf(csv, "%lld,%lld,%lld,%lld,%.1f,%.1f,%.1f,%.3f,%.1f,%.3f,%lld,%lld\n",
                     (long long)S, (long long)H, (long long)rows, (long long)W,
                     p.sequential * 1e6, p.work * 1e6, p.calibrated * 1e6, speedup,
                     p.critical * 1e6, unbounded, (long long)p.modelCritical,
                     (long long)p.modelSequential);
      std::printf("| %lld | %lld | %.1f | %.1f | %.1f | %s%.2f%s | %.1f | %s%.2f%s | %lld "
                  "vs %lld |\n",
                  (long long)S, (long long)H, p.sequential * 1e6, p.work * 1e6,
                  p.calibrated * 1e6, bold(speedup), speedup, bold(speedup),
                  p.critical * 1e6, bold(unbounded), unbounded, bold(unbounded),
                  (long long)p.modelCritical, (long long)p.modelSequential);
      std::fflush(stdout);
    }
  if (csv)
    std::fclose(csv);
  return 0;
}
