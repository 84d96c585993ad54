// pipeline-run: executes the per-rank programs of pipeline-translate, one MPI
// process per rank: mpirun -np W pipeline-run program.json [options].
#include "cli/options.h"
#include "comm/abort_job.h"
#include "comm/agreement.h"
#include "comm/cross_check.h"
#include "comm/startup_watchdog.h"
#include "comm/transport.h"
#include "cuda/env_default.h"
#include "exec/cpu_backend.h"
#include "exec/executor.h"
#include "measure/profile_run.h"
#include "measure/timeline.h"
#include "program/document.h"
#include "program/loader.h"
#include "program/validator.h"
#include "verify/reference.h"
#include "verify/verify.h"
#if PIPESCHED_RUNTIME_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>

using namespace pipesched::runtime;

namespace {

[[noreturn]] void controlTimeout(int rank, double timeout, const std::string &where) {
  abortJob(2, "pipeline-run: rank %d timed out after %.1f s in %s", rank, timeout,
           where.c_str());
}

// A failure on one rank (a model library's error, say) cannot be agreed on
// without hanging the others: it ends the whole job.
[[noreturn]] void abortOnError(int rank, const std::exception &e) {
  abortJob(1, "pipeline-run: rank %d: %s", rank, errorText(e).c_str());
}

DataSpec dataSpec(const Options &o, int microbatches) {
  DataSpec d;
  d.seed = o.seed;
  d.rows = o.batch;
  d.hidden = o.hidden;
  d.microbatches = microbatches;
  d.loss = o.loss;
  return d;
}

// `layers`: the program's layer count per stage (empty: --layers-per-stage).
ModelShape modelShape(const Options &o, int stages, const std::vector<int64_t> &layers) {
  ModelShape shape{stages, o.hidden, o.layers, o.seed,
                   o.relu ? Activation::Relu : Activation::Gelu};
  shape.stageLayers = layers;
  return shape;
}

OptimizerConfig optimizerConfig(const Options &o) {
  OptimizerConfig c;
  c.kind = o.optimizer;
  c.lr = o.learningRate();
  return c;
}

std::unique_ptr<Model> makeModel(const Options &o, int stages,
                                 const std::vector<int64_t> &layers) {
  if (o.modelLib.empty())
    return std::make_unique<Model>(modelShape(o, stages, layers));
  return std::make_unique<Model>(modelShape(o, stages, layers), o.modelLib);
}

// What the program's layer counts need of the run: "" or why not.
std::string layersSupport(const Options &o, const std::vector<int64_t> &layers) {
  for (size_t s = 0; s < layers.size(); ++s)
    if (o.hidden * o.hidden * layers[s] > int64_t(1) << 30)
      return "pipeline-run: --hidden " + std::to_string(o.hidden) + " and the program's " +
             std::to_string(layers[s]) + " layers of stage " + std::to_string(s) +
             " make a stage of more than 2^30 parameters";
  bool uneven = std::any_of(layers.begin(), layers.end(),
                            [&](int64_t n) { return n != layers.front(); });
  if (o.backend == BackendKind::Cuda && uneven)
    return "pipeline-run: --backend cuda builds every stage with one layer count; this "
           "program's stages have different ones (its `layers`, docs/partition.md): run "
           "it on --backend cpu";
  return "";
}

// Without a program: the chain of --stages stages.
int referenceOnly(const Options &o, int rank) {
  int B = o.microbatches;
  StageGraph graph = StageGraph::chain(o.stages);
  std::vector<int64_t> layers;
  Ties ties;
  if (!o.program.empty()) {
    Program p = loadProgram(o.program, -1);
    B = p.microbatches;
    graph = p.graph;
    layers = p.layers;
    if (std::string why = layersSupport(o, layers); !why.empty())
      throw std::runtime_error(why);
    ties = p.ties;
  }
  if (rank != 0)
    return 0;
  std::unique_ptr<Model> model = makeModel(o, graph.stages(), layers);
  ReferenceResult ref =
      runReference(*model, graph, dataSpec(o, B), optimizerConfig(o), o.steps, {}, ties);
  for (int t = 0; t < o.steps; ++t)
    std::printf("step %d: loss %.6f (reference)\n", t + 1, ref.losses[t]);
  return 0;
}

// What a scanned backward (BPPSA) needs of the run: "" or why not.
std::string scannedSupport(const Options &o) {
  if (o.backend != BackendKind::Cpu)
    return "pipeline-run: a scanned backward (BPPSA) runs on --backend cpu only";
  if (!o.modelLib.empty())
    return "pipeline-run: a scanned backward (BPPSA) needs the built-in MLP's Jacobians; "
           "a --model-lib library has none";
  // A Jacobian is --batch blocks of --hidden x --hidden (CSR: about twice).
  if (o.batch * o.hidden * o.hidden > int64_t(1) << 28)
    return "pipeline-run: a scanned backward (BPPSA) holds --batch x --hidden^2 = " +
           std::to_string(o.batch * o.hidden * o.hidden) +
           " floats per Jacobian, more than 2^28";
  return "";
}

// Whether every rank read the same bytes: the same per-rank index (each
// checked its own file against its index, so one index binds all the
// files) or the same single document (a stale copy on one node differs).
// A single document's CRC-32 counts from 2^32, above any index's.
bool samePrograms(const Program &program, int rank, double timeout) {
  const long long mine = (program.perRank ? 0 : 1ll << 32) | program.crc32;
  long long lo = 0, hi = 0;
  if (sameOnEveryRank(mine, rank, timeout, "compare the programs they read", lo, hi))
    return true;
  if (rank == 0) {
    auto name = [](long long v) {
      return (v >> 32 ? "a single document of CRC-32 " : "an index of CRC-32 ") +
             hex32(uint32_t(v));
    };
    std::fprintf(stderr,
                 "pipeline-run: the ranks read different programs: %s and %s (every "
                 "rank must be given the same program)\n",
                 name(lo).c_str(), name(hi).c_str());
    std::fflush(stderr);
  }
  return false;
}

int maxTag() {
  int *ub = nullptr, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag && ub ? *ub : 32767;
}

std::unique_ptr<Backend> makeBackend(const Options &o, const Program &program,
                                     Model &model, Transport &transport, int rank,
                                     int device) {
  const DataSpec data = dataSpec(o, program.microbatches);
#if PIPESCHED_RUNTIME_HAVE_CUDA
  if (o.backend == BackendKind::Cuda)
    return makeCudaBackend(MPI_COMM_WORLD,
                           CudaBackendConfig{&program, rank, device, data,
                                             optimizerConfig(o), model.shape(), o.timeout,
                                             o.setupDeadline(), o.gpuComm, &transport});
#else
  (void)rank;
  (void)device;
#endif
  return std::make_unique<CpuBackend>(model, transport, data, optimizerConfig(o));
}

// Rank 0's verdict on the step time. The first step pays for first touches
// and connection set-up, so it counts only when it is the only one.
void printStepTime(const Program &program, const std::vector<double> &stepMs) {
  const size_t first = stepMs.size() > 1 ? 1 : 0;
  const std::vector<double> later(stepMs.begin() + first, stepMs.end());
  const int steps = int(stepMs.size());
  if (program.cost.tickNs > 0 && program.makespan > 0) {
    // Ticks of a real length (a calibrated cost): a prediction to check,
    // the compiler's replay of these programs when it gives one.
    const bool replayed = program.replayedMakespan > 0;
    const double ticks = replayed ? program.replayedMakespan : program.makespan;
    const double predicted = ticks * double(program.cost.tickNs) / 1e6;
    const double measured = median(later);
    const std::string which =
        steps > 1 ? "median of steps 2.." + std::to_string(steps) : "step 1";
    std::printf("predicted step time %.3f ms (%s %g ticks of %lld ns) vs "
                "measured %.3f ms (%s): error %+.1f%%\n",
                predicted, replayed ? "rank programs replayed:" : "simulated makespan",
                ticks, (long long)program.cost.tickNs, measured, which.c_str(),
                measured > 0 ? (predicted - measured) / measured * 100 : 0.0);
  } else {
    double mean = 0;
    for (double ms : later)
      mean += ms / double(later.size());
    if (program.makespan > 0)
      std::printf("measured step time %.3f ms vs simulated makespan %g units "
                  "(%.4f ms per unit)\n",
                  mean, program.makespan, mean / program.makespan);
    else
      std::printf("measured step time %.3f ms (the program gives no makespan)\n", mean);
  }
  std::fflush(stdout);
}

// What --profile's cost file records of the run.
ProfileContext profileContext(const Options &o, const Program &program, const Model &model) {
  ProfileContext c;
  c.backend = backendName(o.backend);
  c.program = o.program;
  c.model = o.modelLib.empty() ? "built-in MLP" : o.modelLib;
  c.ranks = program.workers;
  c.steps = o.steps;
  c.hidden = o.hidden;
  c.batch = o.batch;
  c.layers = o.layers;
  c.stageLayers = program.layers;
  // An activation message: rows x hidden floats, what the executor sends.
  c.actBytes = o.batch * o.hidden * int64_t(sizeof(float));
  for (int s = 0; s < program.stages; ++s)
    c.weightBytes = std::max(c.weightBytes, model.numParams(s) * int64_t(sizeof(float)));
  return c;
}

// --timeline, --trace and --profile, each gathered to rank 0 and written
// there; 1 if one could not be written (said on stderr), else 0.
int writeOutputs(const Options &o, const Program &program, int rank,
                 const std::vector<OpTiming> &timeline, const Model &model,
                 Backend &backend) {
  int rc = 0;
  if (!o.timeline.empty()) {
    std::string err = writeTimeline(MPI_COMM_WORLD, program, rank, timeline, o.timeline,
                                    o.timeout);
    if (!err.empty()) {
      std::fprintf(stderr, "pipeline-run: %s\n", err.c_str());
      rc = 1;
    }
  }
  if (!o.trace.empty()) {
    std::string err = writeTrace(MPI_COMM_WORLD, program, rank, timeline, o.trace, o.timeout);
    if (!err.empty()) {
      std::fprintf(stderr, "pipeline-run: %s\n", err.c_str());
      rc = 1;
    }
  }
  if (!o.profile.empty()) {
    std::string err = writeProfile(MPI_COMM_WORLD, program, rank, timeline,
                                   profileContext(o, program, model), backend, o.profile,
                                   o.timeout);
    if (!err.empty()) {
      std::fprintf(stderr, "pipeline-run: %s\n", err.c_str());
      rc = 1;
    }
  }
  return rc;
}

// The steps, the summaries, the timeline and --verify, on a backend.
int trainOn(const Options &o, const Program &program, Model &model, int rank,
            Transport &transport, Backend &backend) {
  ExecutorConfig config;
  config.data = dataSpec(o, program.microbatches);
  config.failRank = o.failRank;
  config.failAtOp = o.failAtOp;
  config.skipTiedGrad = o.skipTiedGrad;
  config.jacobians = *bppsa::storageNamed(o.jacobians);
  Executor executor(program, rank, model, backend, config);

  std::vector<OpTiming> timeline;
  std::vector<double> losses, stepMs;
  for (int step = 0; step < o.steps; ++step) {
    if (!transport.barrier())
      controlTimeout(rank, o.timeout, "the barrier before step " + std::to_string(step + 1));
    auto start = Executor::Clock::now();
    double local[1] = {executor.runStep(step, start, timeline)};
    double ms = std::chrono::duration<double, std::milli>(Executor::Clock::now() - start).count();
    double total[1] = {0}, slowest = 0;
    if (!transport.reduceToRoot(local, total, 1, MPI_SUM) ||
        !transport.reduceToRoot(&ms, &slowest, 1, MPI_MAX))
      controlTimeout(rank, o.timeout, "the loss reduction of step " + std::to_string(step + 1));
    if (rank == 0) {
      losses.push_back(total[0] / program.microbatches);
      stepMs.push_back(slowest);
      std::printf("step %d: loss %.6f (measured %.2f ms)\n", step + 1, losses.back(), slowest);
      std::fflush(stdout);
    }
  }

  RankSummary summary = summarize(program, rank, timeline, o.steps);
  summary.peakTensorBytes = double(executor.peakTensorBytes());
  summary.peakFetchedBytes = double(executor.peakFetchedBytes());
  printSummaries(MPI_COMM_WORLD, summary, o.timeout);
  if (rank == 0)
    printStepTime(program, stepMs);

  int rc = writeOutputs(o, program, rank, timeline, model, backend);
  if (o.verify) {
    VerifyInputs in{&program, {},    losses,      config.data, optimizerConfig(o),
                    o.steps,  o.tolerance, o.timeout};
    std::vector<std::vector<float>> owned(program.stages);
    for (int s = 0; s < program.stages; ++s) {
      owned[s] = executor.ownedParams(s);
      in.owned.push_back(program.ranks[rank].ownsStage(s) ? &owned[s] : nullptr);
    }
    std::fflush(stdout);
    if (!verifyRun(MPI_COMM_WORLD, rank, model, in))
      rc = 1;
  }
  std::fflush(stdout);
  // The last agreement (every rank takes part, unlike a broadcast that
  // rank 0 may finish alone): the job's status, and proof that every rank
  // is alive before MPI_Finalize, which has no deadline.
  std::vector<int> silent;
  if (!transport.agreeOnStatus(rc, silent)) {
    std::string who = silent.empty()       ? "waiting for rank 0"
                      : silent.size() == 1 ? "no word from rank "
                                           : "no word from ranks ";
    for (size_t i = 0; i < silent.size(); ++i)
      who += (i ? ", " : "") + std::to_string(silent[i]);
    controlTimeout(rank, rank == 0 ? o.timeout : 2 * o.timeout,
                   "the agreement at the end of the run (" + who + ")");
  }
  return rc;
}

// The distributed run, once the program is valid everywhere. The MPI
// transport also carries the control plane (barriers, losses) under cuda.
int train(const Options &o, const Program &program, Model &model, int rank, int device) {
  Transport transport(MPI_COMM_WORLD, program, rank, o.timeout);
  std::unique_ptr<Backend> backend =
      makeBackend(o, program, model, transport, rank, device);
  // While the backend exists, every end of the job aborts it first, and an
  // error ends the job here: unwinding would run the backend's destructor,
  // which under cuda waits for the streams and NCCL's peers (the executor
  // does the same for errors inside a step, naming the op). Its set-up runs
  // in the scope too: an error there (NCCL up, then out of device memory)
  // prints and aborts at once, not after NCCL's tear-down.
  BackendAbortScope abortBackend([&backend] { backend->abort(); });
  try {
    backend->start();
    return trainOn(o, program, model, rank, transport, *backend);
  } catch (const std::exception &e) {
    abortOnError(rank, e);
  }
}

// Loads and validates the program before any communication but the error
// agreement: every rank checks the whole document. Of a per-rank program a
// rank reads the index and its own file, and checks what needs only its
// own ops (validateRank); the rest waits for the ranks' exchange
// (crossCheckRanks). Then the options that need the program. "" or the
// error.
std::string loadAndValidate(const Options &o, int rank, int size, Program &program) {
  std::string error;
  try {
    program = loadProgram(o.program, o.check ? -1 : size, o.check ? -1 : rank);
    if (program.onlyRank < 0)
      validate(program, ValidateOptions{maxTag()});
    else
      validateRank(program, program.onlyRank, ValidateOptions{maxTag()});
    if (!o.check && o.failRank >= size)
      error = "pipeline-run: --fail-rank " + std::to_string(o.failRank) +
              " is out of range [0, " + std::to_string(size) + ")";
    else if (!o.check && !layersSupport(o, program.layers).empty())
      error = layersSupport(o, program.layers);
    else if (!o.check && program.scanned() && !scannedSupport(o).empty())
      error = scannedSupport(o);
    else if (!o.check && program.scanned() && !o.profile.empty())
      error = "pipeline-run: --profile times forwards and backwards per stage; a "
              "scanned backward (BPPSA) has no backwards to time";
    else if (!o.check && o.failRank >= 0 &&
             (program.onlyRank < 0 || program.onlyRank == o.failRank) &&
             size_t(o.failAtOp) >= program.ranks[o.failRank].ops.size())
      error = "pipeline-run: --fail-at-op " + std::to_string(o.failAtOp) + ": rank " +
              std::to_string(o.failRank) + " has " +
              std::to_string(program.ranks[o.failRank].ops.size()) + " ops";
  } catch (const std::bad_alloc &) {
    error = "pipeline-run: " + o.program + ": out of memory while validating the program";
  } catch (const std::exception &e) {
    error = e.what();
  }
  return error;
}

// The program of the run, as every rank agrees: each loaded and validated
// what it reads, all read the same bytes, and of a per-rank program rank 0
// checked the whole (crossCheckRanks). False when a rank refused it (said
// once). --check stops after the first step.
bool loadEverywhere(const Options &o, int rank, int size, Program &program) {
  std::string error = loadAndValidate(o, rank, size, program);
  if (anyRankFailed(error, rank, size, o.timeout, "load and validate the program"))
    return false;
  if (o.check)
    return true;
  if (!samePrograms(program, rank, o.timeout))
    return false;
  if (!program.perRank)
    return true;
  error = crossCheckRanks(program, rank, size, o.timeout, ValidateOptions{maxTag()});
  return !anyRankFailed(error, rank, size, o.timeout, "check the whole program");
}

int run(int argc, char **argv, int rank, int size) {
  Options o;
  if (auto err = parseOptions(argc, argv, o)) {
    anyRankFailed("pipeline-run: " + *err + " (--help lists the options)", rank, size,
                  o.timeout, "parse their options");
    return 2;
  }
  if (!sameOptions(o, rank, size))
    return 2;
  if (o.help) {
    if (rank == 0)
      std::fputs(usage(), stdout);
    return 0;
  }
  if (o.referenceOnly) {
    std::string error;
    int rc = 0;
    try {
      rc = referenceOnly(o, rank);
    } catch (const std::bad_alloc &) {
      error = "pipeline-run: out of memory while running the reference";
    } catch (const std::exception &e) {
      error = e.what();
    }
    // No deadline: the others wait for rank 0's reference, however long.
    return anyRankFailed(error, rank, size, std::numeric_limits<double>::infinity(),
                         "run the reference")
               ? 1
               : rc;
  }

  Program program;
  if (!loadEverywhere(o, rank, size, program))
    return 1;
  if (o.check) {
    if (rank == 0)
      std::printf("%s: OK: %d ranks, %d stages, %d microbatches, %zu ops\n",
                  o.program.c_str(), program.workers, program.stages,
                  program.microbatches, program.totalOps());
    return 0;
  }

  program.keepOpsOf(rank);

  std::string error;
  // A GPU per rank (or shared, --gpu-comm mpi), chosen before anything
  // touches CUDA; without one every rank says so and all exit.
  int device = -1;
  if (o.backend == BackendKind::Cuda) {
#if PIPESCHED_RUNTIME_HAVE_CUDA
    error = selectCudaDevice(MPI_COMM_WORLD, o.gpuComm == GpuComm::Mpi, o.timeout, device);
#else
    error = "pipeline-run: --backend cuda: this pipeline-run was built without the "
            "CUDA backend (PIPESCHED_RUNTIME_CUDA=OFF, or CUDA, cuBLAS or NCCL not found)";
#endif
    if (everyRankReports(error, rank, o.timeout, "find their GPUs"))
      return 1;
  }

  std::unique_ptr<Model> model;
  try {
    model = makeModel(o, program.stages, program.layers);
    if (!program.ties.empty())
      checkTiesSupported(*model, program.ties);
  } catch (const std::exception &e) {
    error = std::string("pipeline-run: ") + e.what();
  }
  if (anyRankFailed(error, rank, size, o.timeout, "load the model"))
    return 1;

  try {
    return train(o, program, *model, rank, device);
  } catch (const std::exception &e) {
    abortOnError(rank, e); // before a backend exists (train() catches after)
  }
}

// The environment of the libraries, set before MPI_Init: an MPI built with
// CUDA support may start CUDA inside it (CUDA reads CUDA_MODULE_LOADING
// once, when it starts), and MPI's threads run after it (setenv is not
// safe beside a thread that reads the environment). MPI does not say the
// world size yet: the launcher does (launcherWorldSize). A command line
// that does not parse sets nothing; run() reports it.
void setEnvironmentBeforeMpi(int argc, char **argv) {
  Options o;
  if (parseOptions(argc, argv, o) || o.help || o.check || o.referenceOnly)
    return;
  const int size = cuda::launcherWorldSize([](const char *name) { return std::getenv(name); });
  if (cuda::eagerModuleLoadingMatters(o.backend == BackendKind::Cuda,
                                      o.gpuComm == GpuComm::Nccl, size))
    cuda::requestEagerModuleLoading();
}

// MPI_Init's deadline: --setup-timeout's (a start-up waits for the slowest
// process to start, seconds on a loaded machine), or its default when the
// command line does not parse (run() reports that once MPI is up).
double startupTimeout(int argc, char **argv) {
  Options o;
  if (parseOptions(argc, argv, o))
    return Options().setupDeadline();
  return o.setupDeadline();
}

} // namespace

int main(int argc, char **argv) {
  setEnvironmentBeforeMpi(argc, argv);
  {
    StartupWatchdog watchdog(startupTimeout(argc, argv), launcherRank());
    MPI_Init(&argc, &argv);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = run(argc, argv, rank, size);
  std::fflush(stdout);
  MPI_Finalize();
  return rc;
}
