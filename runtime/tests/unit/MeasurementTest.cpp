// What the run reports of itself without MPI: the options --trace and
// --profile, the trace's events (names, tracks, steps one after another,
// the gathering's packing) and the cost file's statistics (medians, the
// transfer fit, samples per stage, the link measured through a probe).
#include "cli/options.h"
#include "exec/link_probe.h"
#include "measure/measured_trace.h"
#include "measure/profile.h"
#include "program/loader.h"

#include "pipesched/Program/Costs.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace pipesched::runtime;
using json = nlohmann::json;

Program load(const std::string &name) {
  return loadProgram(std::string(PIPESCHED_TEST_PROGRAMS) + "/" + name, -1);
}

std::optional<std::string> parse(std::vector<const char *> args, Options &o) {
  args.insert(args.begin(), "pipeline-run");
  return parseOptions(int(args.size()), const_cast<char **>(args.data()), o);
}

// One timing per op of every rank of `p`, for `steps` steps; op i of a
// step runs from 10 i to 10 i + 5 + rank (ns).
std::vector<OpTiming> timings(const Program &p, int rank, int steps) {
  std::vector<OpTiming> t;
  for (int s = 0; s < steps; ++s)
    for (size_t i = 0; i < p.ranks[size_t(rank)].ops.size(); ++i)
      t.push_back(OpTiming{s, int32_t(i), int64_t(10 * i), int64_t(10 * i + 5 + rank)});
  return t;
}

TEST(MeasurementOptions, TraceAndProfile) {
  Options o;
  ASSERT_FALSE(parse({"p.json", "--trace", "t.json", "--profile=c.json"}, o));
  EXPECT_EQ(o.trace, "t.json");
  EXPECT_EQ(o.profile, "c.json");
  Options empty;
  EXPECT_EQ(parse({"p.json", "--profile="}, empty).value_or(""),
            "option --profile expects a file name, got ''");
  const std::string help = usage();
  EXPECT_NE(help.find("\n  --trace FILE "), std::string::npos) << help;
  EXPECT_NE(help.find("\n  --profile FILE "), std::string::npos) << help;
}

TEST(MeasuredTrace, Names) {
  Program gpipe = load("gpipe-2.json");
  const RankProgram &r0 = gpipe.ranks[0];
  EXPECT_EQ(traceName(gpipe, r0, r0.ops[0]), "0F0");
  EXPECT_EQ(traceName(gpipe, r0, r0.ops[1]), "send to 1");
  EXPECT_EQ(traceName(gpipe, r0, r0.ops[3]), "group (send to 1; recv from 1)");
  EXPECT_EQ(traceName(gpipe, r0, r0.ops[4]), "0B0");
  EXPECT_EQ(traceName(gpipe, r0, r0.ops[7]), "optimizer_step 0");
  EXPECT_EQ(traceName(gpipe, gpipe.ranks[1], gpipe.ranks[1].ops[0]), "recv from 0");
  // Split backwards: I for the input half, W for the weights.
  Program zb = load("zb-2.json");
  std::vector<std::string> names;
  for (const RankProgram &rp : zb.ranks)
    for (const Op &op : rp.ops)
      if (isCompute(op.kind))
        names.push_back(traceName(zb, rp, op));
  EXPECT_NE(std::find(names.begin(), names.end(), "1I3"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "0W0"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "1B3"), names.end());
  Program fsdp = load("fsdp-2.json");
  const RankProgram &f0 = fsdp.ranks[0];
  EXPECT_EQ(traceName(fsdp, f0, f0.ops[0]), "group (fetch_weights 1; send_weights 0)");
  EXPECT_EQ(traceName(fsdp, f0, f0.ops[6]), "reduce_grad 1");
}

TEST(MeasuredTrace, PackedOpsComeBack) {
  Program p = load("fsdp-2.json");
  std::vector<TraceOp> ops = traceOps(p, 0, timings(p, 0, 2));
  std::vector<TraceOp> back = unpackTraceOps(packTraceOps(ops));
  ASSERT_EQ(back.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(back[i].name, ops[i].name);
    EXPECT_EQ(back[i].kind, ops[i].kind);
    EXPECT_EQ(back[i].step, ops[i].step);
    EXPECT_EQ(back[i].endNs, ops[i].endNs);
    EXPECT_EQ(back[i].bytes, ops[i].bytes);
    EXPECT_EQ(back[i].peer, ops[i].peer);
    EXPECT_EQ(back[i].root, ops[i].root);
  }
  std::string packed = packTraceOps(ops);
  EXPECT_THROW(unpackTraceOps(packed.substr(0, packed.size() - 1)), std::runtime_error);
  EXPECT_THROW(unpackTraceOps("abc"), std::runtime_error);
}

// Device times on two streams may round below the step's start event (or
// an end below its start): the trace shows neither.
TEST(MeasuredTrace, TimesClampedToTheStep) {
  const OpTiming early = clampedToStep(OpTiming{0, 3, -1500, -200});
  EXPECT_EQ(early.startNs, 0);
  EXPECT_EQ(early.endNs, 0);
  const OpTiming straddling = clampedToStep(OpTiming{1, 4, -7, 900});
  EXPECT_EQ(straddling.startNs, 0);
  EXPECT_EQ(straddling.endNs, 900);
  const OpTiming reversed = clampedToStep(OpTiming{1, 4, 50, 40});
  EXPECT_EQ(reversed.startNs, 50);
  EXPECT_EQ(reversed.endNs, 50);
  const OpTiming fine = clampedToStep(OpTiming{2, 5, 10, 20});
  EXPECT_EQ(fine.step, 2);
  EXPECT_EQ(fine.op, 5);
  EXPECT_EQ(fine.startNs, 10);
  EXPECT_EQ(fine.endNs, 20);

  Program p = load("gpipe-2.json");
  std::vector<OpTiming> t = timings(p, 0, 1);
  t[1].startNs = -3000; // a transfer "before" the step
  t[1].endNs = -1000;
  t[2].startNs = -5;
  std::vector<TraceOp> ops = traceOps(p, 0, t);
  EXPECT_EQ(ops[1].startNs, 0);
  EXPECT_EQ(ops[1].endNs, 0);
  EXPECT_EQ(ops[2].startNs, 0);
  EXPECT_EQ(ops[2].endNs, t[2].endNs);
  for (const TraceOp &e : ops) {
    EXPECT_GE(e.startNs, 0) << e.name;
    EXPECT_GE(e.endNs, e.startNs) << e.name;
  }
  json doc = json::parse(measuredTraceJson({ops}));
  for (const json &e : doc["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    }
}

TEST(MeasuredTrace, StepsOneAfterAnother) {
  Program p = load("gpipe-2.json");
  std::vector<std::vector<TraceOp>> perRank;
  for (int r = 0; r < 2; ++r)
    perRank.push_back(traceOps(p, r, timings(p, r, 2)));
  json doc = json::parse(measuredTraceJson(perRank));
  EXPECT_EQ(doc["otherData"]["source"], "measured");
  EXPECT_EQ(doc["otherData"]["time_unit"], "ns");
  // Rank 1's step 1 is the longest: 9 ops, the last ending at 80 + 6 ns.
  const double step2 = 86 / 1e3;
  size_t slices = 0;
  for (const json &e : doc["traceEvents"]) {
    if (e["ph"] != "X")
      continue;
    ++slices;
    const int step = e["args"]["step"];
    EXPECT_GE(e["ts"].get<double>(), step == 2 ? step2 - 1e-9 : 0.0) << e.dump();
    if (e["cat"] == "forward" || e["cat"] == "backward")
      EXPECT_EQ(e["tid"], 0) << e.dump();
    else
      EXPECT_EQ(e["tid"], 1) << e.dump();
  }
  EXPECT_EQ(slices, 2 * (p.ranks[0].ops.size() + p.ranks[1].ops.size()));
  // The first op of rank 0's second step: 0F0 at the offset.
  bool found = false;
  for (const json &e : doc["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 0 && e["args"]["step"] == 2 && e["name"] == "0F0") {
      EXPECT_NEAR(e["ts"].get<double>(), step2, 1e-9);
      EXPECT_NEAR(e["dur"].get<double>(), 0.005, 1e-9);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(Profile, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 100}), 3.5);
  // 10% of 10 values is 1 each side: 1 and 1000 go, the mean of 2..9.
  EXPECT_EQ(trimmedMean({1000, 2, 3, 4, 5, 6, 7, 8, 9, 1}), 5.5);
  EXPECT_EQ(trimmedMean({4, 2}), 3); // fewer than 10: nothing dropped
  EXPECT_EQ(trimmedMean({}), 0);
}

TEST(Profile, TransferFit) {
  // An exact line: 5000 ns + 0.25 ns per byte.
  TransferFit fit = fitTransfer({64, 2048, 8192, 32768}, {5016, 5512, 7048, 13192});
  EXPECT_NEAR(fit.latency, 5000, 1e-6);
  EXPECT_NEAR(fit.perByte, 0.25, 1e-9);
  // Falling with size (noise): the best constant.
  fit = fitTransfer({64, 2048}, {3000, 1000});
  EXPECT_EQ(fit.perByte, 0);
  EXPECT_EQ(fit.latency, 2000);
  // A negative intercept: the best line through the origin.
  fit = fitTransfer({1000, 2000, 3000}, {100, 1500, 2000});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_NEAR(fit.perByte, (1e5 + 3e6 + 6e6) / (1e6 + 4e6 + 9e6), 1e-12);
  // Nothing measured (one rank), or one size.
  fit = fitTransfer({}, {});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_EQ(fit.perByte, 0);
  fit = fitTransfer({64}, {900});
  EXPECT_EQ(fit.latency, 900);
  EXPECT_EQ(fit.perByte, 0);
}

// A LinkProbe that records what it is asked and answers with set times.
class RecordingProbe final : public LinkProbe {
public:
  std::string path() const override { return "over a test double"; }
  double shift(int64_t bytes, int next, int previous) override {
    shifts.push_back({bytes, next, previous});
    return double(bytes) + double(shifts.size() % 3); // warm-ups included
  }
  double allreduce(int64_t floats) override {
    reduces.push_back(floats);
    return 7000;
  }
  struct Shift {
    int64_t bytes;
    int next, previous;
  };
  std::vector<Shift> shifts;
  std::vector<int64_t> reduces;
};

// --profile measures the link only through the backend's probe: the ring's
// sizes, warm-ups and rounds, the neighbours, rank 0's medians, and the
// all-reduce of one stage's weights, whatever the backend's path.
TEST(Profile, LinkMeasuredThroughTheBackendsProbe) {
  RecordingProbe probe;
  const TransferMeasurement m = measureLink(probe, 0, 4, 2048, 16640);
  EXPECT_EQ(m.path, "over a test double");
  EXPECT_EQ(m.bytes, (std::vector<int64_t>{64, 2048, 8192, 32768}));
  EXPECT_EQ(m.rounds, (std::vector<int64_t>{200, 200, 200, 200}));
  ASSERT_EQ(probe.shifts.size(), size_t(4 * (5 + 200)));
  for (const RecordingProbe::Shift &s : probe.shifts) {
    EXPECT_EQ(s.next, 1);
    EXPECT_EQ(s.previous, 3);
  }
  EXPECT_EQ(probe.shifts[204].bytes, 64);
  EXPECT_EQ(probe.shifts[205].bytes, 2048);
  ASSERT_EQ(m.oneWayNs.size(), 4u);
  for (size_t i = 0; i < m.bytes.size(); ++i) // bytes + 0, 1 or 2: the median is + 1
    EXPECT_EQ(m.oneWayNs[i], double(m.bytes[i]) + 1) << m.bytes[i];
  EXPECT_EQ(probe.reduces, std::vector<int64_t>(5 + 100, 16640 / 4));
  EXPECT_EQ(m.reduceBytes, 16640);
  EXPECT_EQ(m.reduceRounds, 100);
  EXPECT_EQ(m.reduceNs, 7000);

  // Another rank: its own neighbours, no medians of its own; large messages
  // get fewer rounds (at least 20).
  RecordingProbe last;
  const TransferMeasurement other = measureLink(last, 3, 4, int64_t(1) << 22, 0);
  EXPECT_EQ(last.shifts.front().next, 0);
  EXPECT_EQ(last.shifts.front().previous, 2);
  EXPECT_EQ(other.rounds, (std::vector<int64_t>{200, 20, 20, 20}));
  EXPECT_EQ(other.oneWayNs, std::vector<double>(4, 0.0));
  EXPECT_TRUE(last.reduces.empty()); // no weights, nothing to reduce
  EXPECT_EQ(other.reduceBytes, 0);
}

TEST(Profile, CostFile) {
  Program p = load("zb-2.json");
  std::vector<ComputeSample> all;
  for (int r = 0; r < 2; ++r) {
    std::vector<ComputeSample> mine =
        unpackSamples(packSamples(computeSamples(p, r, timings(p, r, 3), 3)));
    all.insert(all.end(), mine.begin(), mine.end());
  }
  // Steps 2 and 3 only: 2 steps x 4 microbatches per stage and direction,
  // and each stage's optimizer step once per step.
  EXPECT_EQ(all.size(), size_t(2 * 2 * 4 * 3 + 2 * 2));
  TransferMeasurement transfer{
      {64, 2048}, {200, 200}, {1000, 2000}, 16640, 20, 5000, "over MPI in host memory"};
  ProfileContext context;
  context.backend = "cpu";
  context.ranks = 2;
  context.steps = 3;
  context.actBytes = 2048;
  context.weightBytes = 16640;
  json doc = json::parse(costFile(p, all, transfer, context).dump());
  namespace costs = pipesched::costs;
  EXPECT_EQ(doc["format"], std::string(costs::kFormat));
  EXPECT_EQ(doc["version"], costs::kVersion);
  EXPECT_EQ(doc["unit"], "ns");
  EXPECT_EQ(doc["stages"], 2);
  for (std::string_view key : costs::kAll)
    EXPECT_TRUE(doc.contains(std::string(key))) << key;
  EXPECT_EQ(doc.size(), std::size(costs::kAll));
  EXPECT_EQ(doc["measured"]["samples"]["optimizer"], json({2, 2}));
  ASSERT_EQ(doc["optimizer"].size(), 2u);
  EXPECT_EQ(doc["reduce"], json({{"bytes", 16640}, {"time", 5000.0}}));
  for (const char *key : {"fwd", "bwd", "bwd_w"}) {
    ASSERT_EQ(doc[key].size(), 2u) << key;
    EXPECT_EQ(doc["measured"]["samples"][key], json({8, 8})) << key;
    for (const json &ns : doc[key])
      EXPECT_GT(ns.get<double>(), 0) << key;
  }
  EXPECT_NEAR(doc["transfer"]["per_byte"].get<double>(), 1000.0 / 1984, 1e-9);
  EXPECT_EQ(doc["measured"]["statistic"], "trimmed mean (10% each side)");
  // The cpu backend's method as it always read; another backend's path in
  // its place (the cuda one's DeviceComm), the file's keys the same.
  EXPECT_EQ(doc["measured"]["transfer"]["method"],
            "every rank sends to the next and receives from the previous at once, over "
            "MPI in host memory; one way = rank 0's median shift; latency + per_byte * "
            "bytes by least squares");
  transfer.path = "over NCCL 2.27.7 between device buffers";
  json gpu = json::parse(costFile(p, all, transfer, context).dump());
  EXPECT_NE(gpu["measured"]["transfer"]["method"].get<std::string>().find(
                "at once, over NCCL 2.27.7 between device buffers; one way"),
            std::string::npos)
      << gpu["measured"]["transfer"];
  EXPECT_EQ(gpu.size(), doc.size());
  EXPECT_EQ(gpu["transfer"], doc["transfer"]);

  // Without a split, bwd_w is empty; a stage nobody timed is an error.
  Program gpipe = load("gpipe-2.json");
  std::vector<ComputeSample> fwdOnly = {{0, Direction::Fwd, 5}, {1, Direction::Fwd, 5},
                                        {0, Direction::Bwd, 7}};
  EXPECT_THROW(
      {
        try {
          costFile(gpipe, fwdOnly, {}, context);
        } catch (const std::runtime_error &e) {
          EXPECT_STREQ(e.what(), "--profile: no rank timed a backward of stage 1");
          throw;
        }
      },
      std::runtime_error);
  fwdOnly.push_back({1, Direction::Bwd, 9});
  json plain = json::parse(costFile(gpipe, fwdOnly, {}, context).dump());
  EXPECT_EQ(plain["bwd_w"], json::array());
  EXPECT_EQ(plain["bwd"], json({7.0, 9.0}));
  EXPECT_EQ(plain["transfer"]["latency"], 0.0);
}

} // namespace
