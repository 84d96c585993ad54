// The CUDA backend's start-up settings that need no GPU: --setup-timeout,
// --gpu-comm, their help text, and the environment default for eager
// module loading and when it is asked for (src/cuda/env_default.h).
#include "cli/options.h"
#include "cuda/env_default.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace pipesched::runtime;

std::optional<std::string> parse(std::vector<const char *> args, Options &o) {
  args.insert(args.begin(), "pipeline-run");
  return parseOptions(int(args.size()), const_cast<char **>(args.data()), o);
}

TEST(GpuOptions, SetupTimeoutDefaultsToTheLargerOf120AndTimeout) {
  Options o;
  ASSERT_FALSE(parse({"p.json"}, o));
  EXPECT_EQ(o.setupDeadline(), 120.0);
  Options shortSteps; // the deadlock check's 2 s does not reach NCCL's set-up
  ASSERT_FALSE(parse({"p.json", "--timeout", "2"}, shortSteps));
  EXPECT_EQ(shortSteps.timeout, 2.0);
  EXPECT_EQ(shortSteps.setupDeadline(), 120.0);
  Options longSteps;
  ASSERT_FALSE(parse({"p.json", "--timeout=600"}, longSteps));
  EXPECT_EQ(longSteps.setupDeadline(), 600.0);
  Options given;
  ASSERT_FALSE(parse({"p.json", "--timeout", "2", "--setup-timeout", "30"}, given));
  EXPECT_EQ(given.setupDeadline(), 30.0);
  EXPECT_EQ(given.timeout, 2.0);
  Options none;
  ASSERT_FALSE(parse({"p.json", "--setup-timeout=inf"}, none));
  EXPECT_TRUE(std::isinf(none.setupDeadline()));
  Options bad;
  EXPECT_EQ(parse({"p.json", "--setup-timeout", "0"}, bad).value_or(""),
            "option --setup-timeout expects a number >= 0.1, got '0'");
}

TEST(GpuOptions, GpuComm) {
  Options o;
  ASSERT_FALSE(parse({"p.json", "--backend", "cuda"}, o));
  EXPECT_EQ(o.gpuComm, GpuComm::Nccl);
  Options mpi;
  ASSERT_FALSE(parse({"p.json", "--backend", "cuda", "--gpu-comm", "mpi"}, mpi));
  EXPECT_EQ(mpi.gpuComm, GpuComm::Mpi);
  Options bad;
  EXPECT_EQ(parse({"p.json", "--backend", "cuda", "--gpu-comm", "gloo"}, bad).value_or(""),
            "option --gpu-comm expects nccl or mpi, got 'gloo'");
  Options cpu;
  EXPECT_EQ(parse({"p.json", "--gpu-comm=mpi"}, cpu).value_or(""),
            "--gpu-comm is an option of --backend cuda");
}

TEST(GpuOptions, HelpListsThem) {
  const std::string help = usage();
  EXPECT_NE(help.find("\n  --gpu-comm nccl|mpi "), std::string::npos) << help;
  EXPECT_NE(help.find("\n  --setup-timeout SECONDS\n"), std::string::npos) << help;
  EXPECT_NE(help.find("(default the larger of 120 and --timeout)"),
            std::string::npos)
      << help;
}

// Saves and restores a variable around a test.
class SavedEnv {
public:
  explicit SavedEnv(const char *name) : name_(name) {
    if (const char *v = std::getenv(name))
      saved_ = v;
    unsetenv(name);
  }
  ~SavedEnv() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> saved_;
};

TEST(EnvDefault, SetsOnlyWhatTheUserLeftUnset) {
  using pipesched::runtime::cuda::setEnvDefault;
  const char *var = "PIPESCHED_TEST_ENV_DEFAULT";
  SavedEnv saved(var);
  EXPECT_TRUE(setEnvDefault(var, "EAGER"));
  EXPECT_STREQ(std::getenv(var), "EAGER");
  setenv(var, "LAZY", 1);
  EXPECT_FALSE(setEnvDefault(var, "EAGER"));
  EXPECT_STREQ(std::getenv(var), "LAZY");
  setenv(var, "", 1); // empty: CUDA would apply its default, so it is unset
  EXPECT_TRUE(setEnvDefault(var, "EAGER"));
  EXPECT_STREQ(std::getenv(var), "EAGER");
}

TEST(EnvDefault, EagerModuleLoadingRespectsTheUser) {
  using pipesched::runtime::cuda::requestEagerModuleLoading;
  SavedEnv saved("CUDA_MODULE_LOADING");
  EXPECT_TRUE(requestEagerModuleLoading());
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "EAGER");
  setenv("CUDA_MODULE_LOADING", "LAZY", 1);
  EXPECT_FALSE(requestEagerModuleLoading());
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "LAZY");
}

// Eager loading only where an NCCL kernel can spin for a peer while a
// module loads: --backend cuda, NCCL, two ranks or more.
TEST(EnvDefault, EagerModuleLoadingOnlyForNcclWithPeers) {
  using pipesched::runtime::cuda::eagerModuleLoadingMatters;
  EXPECT_TRUE(eagerModuleLoadingMatters(true, true, 2));
  EXPECT_TRUE(eagerModuleLoadingMatters(true, true, 512));
  EXPECT_FALSE(eagerModuleLoadingMatters(true, true, 1));   // no peer, no communicator
  EXPECT_FALSE(eagerModuleLoadingMatters(true, true, 0));   // (no size known: one)
  EXPECT_FALSE(eagerModuleLoadingMatters(true, false, 8));  // --gpu-comm mpi
  EXPECT_FALSE(eagerModuleLoadingMatters(false, true, 8));  // --backend cpu
  EXPECT_FALSE(eagerModuleLoadingMatters(false, false, 1));
}

// The world size before MPI_Init, from what the launcher put in the
// environment: Open MPI's, then Hydra's, then Slurm's; one without any.
TEST(EnvDefault, LauncherWorldSize) {
  using pipesched::runtime::cuda::launcherWorldSize;
  auto env = [](std::vector<std::pair<std::string, std::string>> vars) {
    return [vars](const char *name) -> const char * {
      for (const auto &v : vars)
        if (v.first == name)
          return v.second.c_str();
      return nullptr;
    };
  };
  EXPECT_EQ(launcherWorldSize(env({})), 1); // a singleton
  EXPECT_EQ(launcherWorldSize(env({{"OMPI_COMM_WORLD_SIZE", "4"}})), 4);
  EXPECT_EQ(launcherWorldSize(env({{"PMI_SIZE", "8"}})), 8);
  EXPECT_EQ(launcherWorldSize(env({{"SLURM_NTASKS", "16"}})), 16);
  // mpirun inside a Slurm allocation: mpirun's own count first.
  EXPECT_EQ(launcherWorldSize(
                env({{"SLURM_NTASKS", "16"}, {"PMI_SIZE", "8"}, {"OMPI_COMM_WORLD_SIZE", "2"}})),
            2);
  EXPECT_EQ(launcherWorldSize(env({{"SLURM_NTASKS", "16"}, {"PMI_SIZE", "8"}})), 8);
  // Not a positive int: the next variable, or one rank.
  for (const char *bad : {"", "0", "-2", "4x", "x", "99999999999", " "})
    EXPECT_EQ(launcherWorldSize(env({{"OMPI_COMM_WORLD_SIZE", bad}, {"SLURM_NTASKS", "3"}})),
              3)
        << "'" << bad << "'";
  EXPECT_EQ(launcherWorldSize(env({{"PMI_SIZE", "zero"}})), 1);
  // The decision main() makes before MPI_Init.
  using pipesched::runtime::cuda::eagerModuleLoadingMatters;
  EXPECT_TRUE(eagerModuleLoadingMatters(true, true, launcherWorldSize(env({{"PMI_SIZE", "2"}}))));
  EXPECT_FALSE(eagerModuleLoadingMatters(true, true, launcherWorldSize(env({}))));
  EXPECT_FALSE(eagerModuleLoadingMatters(
      true, true, launcherWorldSize(env({{"OMPI_COMM_WORLD_SIZE", "1"}}))));
}

} // namespace
