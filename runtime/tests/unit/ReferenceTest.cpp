// The sequential reference, the model library ABI, liveness and options.
#include "cli/options.h"
#include "comm/poll_backoff.h"
#include "exec/liveness.h"
#include "exec/tensor_store.h"
#include "program/loader.h"
#include "verify/reference.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace pipesched::runtime;

namespace {

DataSpec data(LossKind loss = LossKind::Mse) {
  DataSpec d;
  d.seed = 3;
  d.rows = 4;
  d.hidden = 16;
  d.microbatches = 3;
  d.loss = loss;
  return d;
}

StageGraph chain(const Model &m) { return StageGraph::chain(m.shape().stages); }

OptimizerConfig adam() {
  OptimizerConfig o;
  o.kind = OptimizerKind::Adam;
  o.lr = 0.01f;
  return o;
}

TEST(Reference, IsDeterministic) {
  ModelShape shape{3, 16, 2, 3};
  Model m1(shape), m2(shape);
  ReferenceResult a = runReference(m1, chain(m1), data(), OptimizerConfig{}, 3);
  ReferenceResult b = runReference(m2, chain(m2), data(), OptimizerConfig{}, 3);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(a.params, b.params);
  ASSERT_EQ(a.params.size(), 3u);
  EXPECT_EQ(a.params[0].size(), size_t(2 * (16 * 16 + 16)));
}

TEST(Reference, StagesOfTheirOwnLayerCounts) {
  // A partitioned program's `layers`: stage s has stageLayers[s] layers.
  ModelShape shape{3, 16, 1, 3};
  shape.stageLayers = {3, 1, 2};
  Model m(shape);
  EXPECT_EQ(m.numParams(0), 3 * (16 * 16 + 16));
  EXPECT_EQ(m.numParams(1), 16 * 16 + 16);
  EXPECT_EQ(m.paramLayout(2).size(), 4u); // two weights, two biases
  ReferenceResult r = runReference(m, chain(m), data(), OptimizerConfig{}, 2);
  ASSERT_EQ(r.params.size(), 3u);
  EXPECT_EQ(r.params[0].size(), size_t(3 * (16 * 16 + 16)));
  EXPECT_EQ(r.params[2].size(), size_t(2 * (16 * 16 + 16)));
  EXPECT_TRUE(std::isfinite(r.losses[1]));
}

TEST(Reference, SeedsAndStepsMatter) {
  ModelShape shape{2, 16, 1, 3};
  Model m(shape);
  ReferenceResult a = runReference(m, chain(m), data(), OptimizerConfig{}, 2);
  EXPECT_NE(a.losses[0], a.losses[1]);
  ModelShape other = shape;
  other.seed = 4;
  Model m2(other);
  DataSpec d = data();
  d.seed = 4;
  EXPECT_NE(runReference(m2, chain(m2), d, OptimizerConfig{}, 2).losses, a.losses);
}

TEST(Reference, TrainingFitsOneBatch) {
  // The data changes every step, so check that one SGD step lowers the loss
  // of the batch it was computed on.
  ModelShape shape{2, 16, 1, 5};
  Model m(shape);
  DataSpec d = data(LossKind::CrossEntropy);
  d.microbatches = 1;
  ReferenceResult r0 = runReference(m, chain(m), d, OptimizerConfig{}, 1);
  std::vector<float> x(size_t(d.rows * d.hidden)), h(x.size()), y(x.size());
  auto lossWith = [&](const std::vector<std::vector<float>> &p) {
    makeInput(d, 0, 0, x.data());
    m.forward(0, p[0].data(), d.rows, x.data(), h.data());
    m.forward(1, p[1].data(), d.rows, h.data(), y.data());
    return lossAndGrad(d, 0, 0, y.data(), nullptr);
  };
  EXPECT_LT(lossWith(r0.params), r0.losses[0]);
}

TEST(Reference, AdamAndCrossEntropyStayFinite) {
  ModelShape shape{2, 16, 2, 9};
  Model m(shape);
  ReferenceResult r = runReference(m, chain(m), data(LossKind::CrossEntropy), adam(), 4);
  for (double l : r.losses)
    EXPECT_TRUE(std::isfinite(l));
  EXPECT_NEAR(r.losses[0], std::log(16.0), 0.5); // ~uniform prediction at start
}

// The example library reimplements the MLP in C: same weights, bit for bit.
TEST(ModelLibrary, TrainsLikeTheBuiltIn) {
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam}) {
    ModelShape shape{3, 16, 2, 3};
    Model builtin(shape);
    Model plugin(shape, PIPESCHED_MLP_PLUGIN);
    EXPECT_EQ(plugin.name(), std::string("example MLP plugin (") + PIPESCHED_MLP_PLUGIN + ")");
    OptimizerConfig o = kind == OptimizerKind::Sgd ? OptimizerConfig{} : adam();
    DataSpec d = data();
    d.rows = 13; // the built-in's blocks of 8 rows and the remainder
    ReferenceResult a = runReference(builtin, chain(builtin), d, o, 3);
    ReferenceResult b = runReference(plugin, chain(plugin), d, o, 3);
    EXPECT_EQ(a.losses, b.losses);
    EXPECT_EQ(a.params, b.params);
  }
}

TEST(ModelLibrary, LoadErrors) {
  ModelShape shape;
  try {
    Model m(shape, "/nonexistent/libnothing.so");
    FAIL();
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot load model library"), std::string::npos);
  }
}

TEST(TensorStore, CountsBytes) {
  TensorStore s;
  auto host = [](size_t n) { return std::make_unique<HostBuffer>(n); };
  s.put(1, host(10));
  s.put(2, host(20));
  EXPECT_EQ(s.liveBytes(), 120u);
  s.erase(1);
  s.put(3, host(5));
  EXPECT_EQ(s.liveBytes(), 100u);
  EXPECT_EQ(s.peakBytes(), 120u);
  s.put(2, host(1)); // replaces
  EXPECT_EQ(s.liveBytes(), 24u);
  EXPECT_EQ(s.find(1), nullptr);
}

// Every tensor a rank touches is freed once, after its last use.
TEST(Liveness, FreesAfterLastUse) {
  for (const char *name : {"1f1b-4.json", "dag-skip-1f1b.json", "fsdp-2.json"}) {
    Program p = loadProgram(std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name, -1);
    for (int r = 0; r < p.workers; ++r) {
      FreePlan plan = planFrees(p, r);
      const RankProgram &rp = p.ranks[r];
      std::map<int64_t, size_t> last;
      for (size_t i = 0; i < rp.ops.size(); ++i)
        forEachTensor(rp, rp.ops[i], [&](int64_t id) { last[id] = i; });
      std::set<int64_t> freed;
      for (size_t i = 0; i < rp.ops.size(); ++i)
        for (uint32_t k = plan.offsets[i]; k < plan.offsets[i + 1]; ++k) {
          EXPECT_TRUE(freed.insert(plan.ids[k]).second);
          EXPECT_EQ(last.at(plan.ids[k]), i) << describeTensor(p, plan.ids[k]);
        }
      EXPECT_EQ(freed.size(), last.size()) << name;
    }
  }
}

std::optional<std::string> parse(std::vector<const char *> args, Options &o) {
  args.insert(args.begin(), "pipeline-run");
  return parseOptions(int(args.size()), const_cast<char **>(args.data()), o);
}

// Every option of the usage is one the ranks compare (sharedOptions), and
// giving one changes exactly its own entry: an option added later without
// its entry fails here.
TEST(Options, EveryOptionIsShared) {
  const std::vector<SharedOption> defaults = sharedOptions(Options());
  std::set<std::string> names;
  for (const SharedOption &s : defaults)
    names.insert(s.name);
  const std::string text = usage();
  for (size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 2)) {
    const size_t end = text.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", at + 2);
    EXPECT_EQ(names.count(text.substr(at, end - at)), 1u) << text.substr(at, end - at);
  }
  const std::vector<std::vector<const char *>> changes = {
      {"--hidden", "32"},  {"--batch", "4"},        {"--layers-per-stage", "2"},
      {"--seed", "2"},     {"--loss", "ce"},        {"--activation", "relu"},
      {"--steps", "4"},    {"--optimizer", "adam"}, {"--lr", "0.5"},
      {"--timeout", "5"},  {"--setup-timeout", "5"}, {"--trace", "t.json"},
      {"--timeline", "t.csv"}, {"--profile", "c.json"}, {"--verify"},
      {"--tolerance", "0.1"}, {"--check"},          {"--skip-tied-grad"},
      {"--jacobians", "csr"}, {"--model-lib", "m.so"}};
  for (const std::vector<const char *> &change : changes) {
    std::vector<const char *> args = {"p.json"};
    args.insert(args.end(), change.begin(), change.end());
    Options o;
    ASSERT_FALSE(parse(args, o)) << change[0];
    const std::vector<SharedOption> mine = sharedOptions(o);
    ASSERT_EQ(mine.size(), defaults.size());
    std::vector<std::string> differ;
    for (size_t i = 0; i < mine.size(); ++i)
      if (mine[i].value != defaults[i].value)
        differ.push_back(mine[i].name);
    // The optimizer changes its default learning rate too.
    const std::string name = change[0];
    EXPECT_EQ(differ.front(), name);
    EXPECT_EQ(differ.size(), name == "--optimizer" ? 2u : 1u) << name;
  }
}

// An output that is an input, or another output, is refused at parsing.
TEST(Options, OutputsAreNotInputs) {
  auto error = [](std::vector<const char *> args) {
    Options fresh;
    return parse(std::move(args), fresh).value_or("(accepted)");
  };
  const std::string program = std::string(PIPESCHED_TEST_PROGRAMS) + "/gpipe-2.json";
  EXPECT_EQ(error({program.c_str(), "--trace", program.c_str()}),
            "--trace '" + program + "' is the program (an output must not overwrite an input)");
  EXPECT_EQ(error({"p.json", "--trace", "out.json", "--timeline", "./out.json"}),
            "--timeline './out.json' and --trace 'out.json' name the same file (each output "
            "needs its own)");
  EXPECT_EQ(error({"p.json", "--profile", "m.so", "--model-lib", "m.so"}),
            "--profile 'm.so' is the --model-lib library (an output must not overwrite an "
            "input)");
  EXPECT_EQ(error({"p.json", "--trace", "a.json", "--timeline", "b.csv"}), "(accepted)");
}

TEST(Options, Parses) {
  Options o;
  EXPECT_FALSE(parse({"p.json", "--hidden", "32", "--optimizer=adam", "--verify"}, o));
  EXPECT_EQ(o.program, "p.json");
  EXPECT_EQ(o.hidden, 32);
  EXPECT_TRUE(o.verify);
  EXPECT_FLOAT_EQ(o.learningRate(), 0.01f);
  auto error = [](std::vector<const char *> args) {
    Options fresh;
    return parse(std::move(args), fresh).value_or("(accepted)");
  };
  EXPECT_EQ(error({"p.json", "--hidden", "x"}),
            "option --hidden expects an integer in [1, 16384], got 'x'");
  EXPECT_EQ(error({"p.json", "--frobnicate"}), "unknown option '--frobnicate'");
  EXPECT_EQ(error({"p.json", "--fail-rank", "1"}), "--fail-rank and --fail-at-op go together");
  EXPECT_EQ(error({"p.json", "q.json"}), "more than one program given ('p.json' and 'q.json')");
  EXPECT_EQ(error({}), "no program given");
  EXPECT_EQ(error({"--reference-only", "--stages", "2", "--microbatches", "3"}), "(accepted)");
  EXPECT_EQ(error({"p.json", "--backend", "gpu"}),
            "option --backend expects cpu or cuda, got 'gpu'");
  EXPECT_EQ(error({"p.json", "--backend", "cuda"}), "(accepted)");
  EXPECT_EQ(error({"p.json", "--backend=cuda", "--model-lib", "m.so"}),
            "--model-lib runs on --backend cpu only (cuda runs the built-in MLP)");
  EXPECT_EQ(error({"p.json", "--timeout", "inf"}), "(accepted)");
  EXPECT_EQ(error({"p.json", "--timeout", "nan"}),
            "option --timeout expects a number >= 0.1, got 'nan'");
}

// A huge --timeout means no deadline, not an overflow that expires at once.
TEST(Options, DeadlinesSaturate) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  EXPECT_EQ(deadlineAfter(now, std::numeric_limits<double>::infinity()),
            Clock::time_point::max());
  EXPECT_EQ(deadlineAfter(now, 1e19), Clock::time_point::max());
  EXPECT_GT(deadlineAfter(now, 1e9), now + std::chrono::hours(24 * 365 * 30));
  EXPECT_EQ(deadlineAfter(now, 2.0), now + std::chrono::seconds(2));
}

} // namespace
