#include "cli/options.h"

#include <cmath>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <utility>

namespace pipesched::runtime {

const char *usage() {
  return R"(usage: mpirun -np W pipeline-run program.json [options]
       pipeline-run --reference-only [program.json] [options]
       pipeline-run --check program.json

program.json: one document, JSON or CBOR; or a directory in the per-rank
layout (its index.json or index.cbor and one file per rank: each rank reads
the index and its own file; --check reads them all)

model and data (every rank derives the same values from --seed):
  --hidden H             width of every layer (default 64)
  --batch N              rows per microbatch (default 8)
  --layers-per-stage L   Linear+GELU layers per stage (default 1)
  --activation gelu|relu the built-in MLP's activation (default gelu)
  --seed N               weights and data seed (default 1)
  --loss mse|ce          mean squared error or softmax cross-entropy (mse)
  --model-lib PATH.so    compute stages with a model library (stage_abi.h)
training:
  --steps N              training steps (default 3)
  --optimizer sgd|adam   (default sgd)
  --lr X                 learning rate (default 0.05 for sgd, 0.01 for adam)
running:
  --backend cpu|cuda     compute and transport backend (default cpu); cuda:
                         cuBLAS on the GPU, built-in MLP only
  --jacobians dense|csr  a scanned backward (BPPSA): hold each Jacobian
                         dense or in CSR (exact zeros dropped) (default dense)
  --gpu-comm nccl|mpi    cuda: transfers and collectives on NCCL (default; a
                         GPU per rank), or over MPI through pinned host memory
                         (ranks may share a GPU)
  --timeout SECONDS      deadline of every wait (default 60; inf: none)
  --setup-timeout SECONDS
                         deadline of the start-up (MPI_Init; cuda: NCCL's
                         communicators, the GPU warm-up) and of NCCL's
                         tear-down (default the larger of 120 and --timeout)
  --timeline FILE        per-op start/end of every rank as CSV (written by rank 0)
  --trace FILE           the same as a Chrome trace (Perfetto, chrome://tracing)
  --profile FILE         measure this machine: per-stage compute medians and
                         the transfer time, as a cost file for the compiler
  --fail-rank R --fail-at-op N
                         rank R exits with status 3 before its op N (first step)
  --skip-tied-grad       fault injection: run no tied_grad, so that each copy of
                         a tied weight steps with its own stage's gradient only
                         (--verify must then fail)
checking:
  --verify               compare the final weights and losses with a sequential
                         reference, and replicas with each other
  --tolerance X          --verify's bound on the normwise relative error per
                         parameter tensor (default 1e-5)
  --reference-only       only run the sequential reference and print its losses;
                         without a program, give --stages S --microbatches B
  --check                validate the program for its own worker count and exit
  --help
)";
}

const char *backendName(BackendKind kind) {
  switch (kind) {
  case BackendKind::Cpu:
    return "cpu";
  case BackendKind::Cuda:
    return "cuda";
  }
  return "?"; // not reached: the switch names every kind
}

namespace {

bool parseInt(const std::string &s, int64_t lo, int64_t hi, int64_t &out) {
  if (s.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

bool parseDouble(const std::string &s, double &out) {
  if (s.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

// Which file a path names, to tell whether two paths name one file: its
// device and inode when it exists (links and "./" included); else its
// directory's and its name; else the path itself.
struct FileKey {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  bool operator==(const FileKey &k) const {
    return dev == k.dev && ino == k.ino && name == k.name;
  }
};

std::string directoryOf(const std::string &path) {
  const size_t slash = path.find_last_not_of('/') == std::string::npos
                           ? std::string::npos
                           : path.rfind('/', path.find_last_not_of('/'));
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

FileKey fileKey(const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0)
    return {st.st_dev, st.st_ino, ""};
  const std::string dir = directoryOf(path);
  const std::string name = path.substr(path.rfind('/') + 1);
  if (stat(dir.c_str(), &st) == 0)
    return {st.st_dev, st.st_ino, name};
  return {0, 0, path};
}

bool isDirectory(const std::string &path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// An output that is an input (the program, a file of a per-rank program's
// directory, the model library) or another output would be overwritten by
// the run: "" or why.
std::string outputClash(const Options &o) {
  const std::pair<const char *, const std::string *> outputs[] = {
      {"--timeline", &o.timeline}, {"--trace", &o.trace}, {"--profile", &o.profile}};
  const auto quoted = [](const std::string &s) { return "'" + s + "'"; };
  const std::string sameFile = " (an output must not overwrite an input)";
  for (size_t i = 0; i < std::size(outputs); ++i) {
    const auto &[name, path] = outputs[i];
    if (path->empty())
      continue;
    const FileKey key = fileKey(*path);
    const std::string what = std::string(name) + " " + quoted(*path);
    if (!o.program.empty() && key == fileKey(o.program))
      return what + " is the program" + sameFile;
    if (!o.program.empty() && isDirectory(o.program) &&
        fileKey(directoryOf(*path)) == fileKey(o.program))
      return what + " is inside the per-rank program's directory " + quoted(o.program) +
             sameFile;
    if (!o.modelLib.empty() && key == fileKey(o.modelLib))
      return what + " is the --model-lib library" + sameFile;
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].second->empty() && key == fileKey(*outputs[j].second))
        return std::string(outputs[j].first) + " " + quoted(*outputs[j].second) +
               " and " + what + " name the same file (each output needs its own)";
  }
  return "";
}

} // namespace

namespace {

using Setter = std::function<std::optional<std::string>(const std::string &)>;

template <class Store> Setter integerSetter(int64_t lo, int64_t hi, Store store) {
  return [=](const std::string &v) -> std::optional<std::string> {
    int64_t x;
    if (!parseInt(v, lo, hi, x))
      return "expects an integer in [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "], got '" + v + "'";
    store(x);
    return std::nullopt;
  };
}

// Finite unless `infinite` (a deadline: inf waits for ever); `inf` as a
// --tolerance or --lr would read as a setting and disable the check.
template <class Store> Setter numberSetter(double lo, Store store, bool infinite = false) {
  return [=](const std::string &v) -> std::optional<std::string> {
    double x;
    if (!parseDouble(v, x) || !(x >= lo) || (!infinite && std::isinf(x))) {
      char bound[32];
      std::snprintf(bound, sizeof bound, "%g", lo);
      return std::string(infinite ? "expects a number >= "
                                  : "expects a finite number >= ") +
             bound + ", got '" + v + "'";
    }
    store(x);
    return std::nullopt;
  };
}

template <class Store> Setter fileSetter(Store store) {
  return [=](const std::string &v) -> std::optional<std::string> {
    if (v.empty())
      return "expects a file name, got ''";
    store(v);
    return std::nullopt;
  };
}

// The options that take a value, each with what stores it in `o`.
std::map<std::string, Setter> valuedOptions(Options &o) {
  const int64_t kBig = int64_t(1) << 30;
  return {
      {"--hidden", integerSetter(1, 1 << 14, [&](int64_t x) { o.hidden = x; })},
      {"--batch", integerSetter(1, kBig, [&](int64_t x) { o.batch = x; })},
      {"--layers-per-stage", integerSetter(1, 1 << 16, [&](int64_t x) { o.layers = x; })},
      {"--seed", integerSetter(0, INT64_MAX, [&](int64_t x) { o.seed = uint64_t(x); })},
      {"--steps", integerSetter(1, kBig, [&](int64_t x) { o.steps = int(x); })},
      {"--fail-rank", integerSetter(0, kBig, [&](int64_t x) { o.failRank = int(x); })},
      {"--fail-at-op", integerSetter(0, INT64_MAX, [&](int64_t x) { o.failAtOp = x; })},
      {"--stages", integerSetter(1, kBig, [&](int64_t x) { o.stages = int(x); })},
      {"--microbatches", integerSetter(1, kBig, [&](int64_t x) { o.microbatches = int(x); })},
      {"--lr", numberSetter(0, [&](double x) { o.lr = x; })},
      // Deadlines are printed to 0.1 s ("timed out after 1.0 s") and no
      // MPI exchange is bounded finer: 0.1 s at least.
      {"--timeout", numberSetter(0.1, [&](double x) { o.timeout = x; }, true)},
      {"--setup-timeout",
       numberSetter(0.1, [&](double x) { o.setupTimeout = x; }, true)},
      {"--tolerance", numberSetter(0, [&](double x) { o.tolerance = x; })},
      {"--timeline", [&](const std::string &v) { o.timeline = v; return std::optional<std::string>(); }},
      {"--trace", fileSetter([&](const std::string &v) { o.trace = v; })},
      {"--profile", fileSetter([&](const std::string &v) { o.profile = v; })},
      {"--model-lib", [&](const std::string &v) { o.modelLib = v; return std::optional<std::string>(); }},
      {"--optimizer",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v == "sgd") o.optimizer = OptimizerKind::Sgd;
         else if (v == "adam") o.optimizer = OptimizerKind::Adam;
         else return "expects sgd or adam, got '" + v + "'";
         return std::nullopt;
       }},
      {"--loss",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v == "mse") o.loss = LossKind::Mse;
         else if (v == "ce") o.loss = LossKind::CrossEntropy;
         else return "expects mse or ce, got '" + v + "'";
         return std::nullopt;
       }},
      {"--backend",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v == "cpu") o.backend = BackendKind::Cpu;
         else if (v == "cuda") o.backend = BackendKind::Cuda;
         else return "expects cpu or cuda, got '" + v + "'";
         return std::nullopt;
       }},
      {"--activation",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v != "gelu" && v != "relu")
           return "expects gelu or relu, got '" + v + "'";
         o.relu = v == "relu";
         return std::nullopt;
       }},
      {"--jacobians",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v != "dense" && v != "csr")
           return "expects dense or csr, got '" + v + "'";
         o.jacobians = v;
         return std::nullopt;
       }},
      {"--gpu-comm",
       [&](const std::string &v) -> std::optional<std::string> {
         if (v == "nccl") o.gpuComm = GpuComm::Nccl;
         else if (v == "mpi") o.gpuComm = GpuComm::Mpi;
         else return "expects nccl or mpi, got '" + v + "'";
         return std::nullopt;
       }},
  };
}

// The options that take no value.
std::map<std::string, bool *> flagOptions(Options &o) {
  return {
      {"--verify", &o.verify},
      {"--reference-only", &o.referenceOnly},
      {"--check", &o.check},
      {"--skip-tied-grad", &o.skipTiedGrad},
      {"--help", &o.help},
      {"-h", &o.help},
  };
}

// Reads argv into `o`: the program (the one positional argument), flags,
// and --name value or --name=value.
std::optional<std::string> readArguments(int argc, char **argv, Options &o) {
  const std::map<std::string, Setter> valued = valuedOptions(o);
  const std::map<std::string, bool *> flags = flagOptions(o);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!o.program.empty())
        return "more than one program given ('" + o.program + "' and '" + arg + "')";
      o.program = arg;
      continue;
    }
    std::string value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    if (auto f = flags.find(arg); f != flags.end()) {
      if (hasValue)
        return "option " + arg + " takes no value";
      *f->second = true;
      continue;
    }
    auto v = valued.find(arg);
    if (v == valued.end())
      return "unknown option '" + arg + "'";
    if (!hasValue) {
      if (i + 1 >= argc)
        return "option " + arg + " needs a value";
      value = argv[++i];
    }
    if (auto err = v->second(value))
      return "option " + arg + " " + *err;
  }
  return std::nullopt;
}

// The options that exclude or need one another, and the sizes they make.
std::optional<std::string> checkCombinations(const Options &o) {
  if (o.program.empty() && !o.referenceOnly)
    return "no program given";
  if (o.referenceOnly && o.program.empty() && (o.stages == 0 || o.microbatches == 0))
    return "--reference-only without a program needs --stages and --microbatches";
  if ((o.failRank >= 0) != (o.failAtOp >= 0))
    return "--fail-rank and --fail-at-op go together";
  if (o.backend == BackendKind::Cuda && !o.modelLib.empty())
    return "--model-lib runs on --backend cpu only (cuda runs the built-in MLP)";
  if (o.relu && !o.modelLib.empty())
    return "--activation is an option of the built-in MLP, not of a --model-lib library";
  if (o.relu && o.backend == BackendKind::Cuda)
    return "--activation relu runs on --backend cpu only (the CUDA kernels are GELU)";
  if (o.backend != BackendKind::Cuda && o.gpuComm != GpuComm::Nccl)
    return "--gpu-comm is an option of --backend cuda";
  if (o.hidden * o.hidden * o.layers > int64_t(1) << 30)
    return "--hidden and --layers-per-stage make a stage of more than 2^30 parameters";
  if (o.batch * o.hidden > int64_t(1) << 30)
    return "--batch x --hidden is more than 2^30 floats per tensor";
  if (std::string clash = outputClash(o); !clash.empty())
    return clash;
  return std::nullopt;
}

} // namespace

std::optional<std::string> parseOptions(int argc, char **argv, Options &o) {
  if (auto error = readArguments(argc, argv, o))
    return error;
  if (o.help)
    return std::nullopt;
  return checkCombinations(o);
}

namespace {

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

std::string given(bool on) { return on ? "given" : "not given"; }

std::string orNotGiven(int64_t x) { return x < 0 ? "not given" : std::to_string(x); }

} // namespace

std::vector<SharedOption> sharedOptions(const Options &o) {
  return {
      {"--hidden", std::to_string(o.hidden)},
      {"--batch", std::to_string(o.batch)},
      {"--layers-per-stage", std::to_string(o.layers)},
      {"--activation", o.relu ? "relu" : "gelu"},
      {"--seed", std::to_string(o.seed)},
      {"--loss", o.loss == LossKind::Mse ? "mse" : "ce"},
      {"--model-lib", o.modelLib.empty() ? "not given" : o.modelLib},
      {"--steps", std::to_string(o.steps)},
      {"--optimizer", o.optimizer == OptimizerKind::Sgd ? "sgd" : "adam"},
      {"--lr", number(o.learningRate())},
      {"--backend", backendName(o.backend)},
      {"--jacobians", o.jacobians},
      {"--gpu-comm", o.gpuComm == GpuComm::Nccl ? "nccl" : "mpi"},
      {"--timeout", number(o.timeout)},
      {"--setup-timeout", number(o.setupDeadline())},
      {"--timeline", given(!o.timeline.empty())},
      {"--trace", given(!o.trace.empty())},
      {"--profile", given(!o.profile.empty())},
      {"--fail-rank", orNotGiven(o.failRank)},
      {"--fail-at-op", orNotGiven(o.failAtOp)},
      {"--skip-tied-grad", given(o.skipTiedGrad)},
      {"--verify", given(o.verify)},
      {"--tolerance", number(o.tolerance)},
      {"--reference-only", given(o.referenceOnly)},
      {"--check", given(o.check)},
      {"--stages", std::to_string(o.stages)},
      {"--microbatches", std::to_string(o.microbatches)},
      {"--help", given(o.help)},
  };
}

} // namespace pipesched::runtime
