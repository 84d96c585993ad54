//===- VShapeGreedyTest.cpp - V-Min and V-Half against zbv_greedy.py -----===//
//
// The reference orders are the output of zbv_greedy.py (sail-sg/
// zero-bubble-pipeline-parallelism 39f2c186, megatron/core/
// pipeline_parallel/zerobubble/scheduler/zbv_greedy.py,
// `PipelineGraph(p, m, "min" | "half", ...).create_schedule`), one string
// per rank, "{stage}{F|B|W}{microbatch}" with B the input-gradient half;
// rank r holds stages r and 2p-1-r. The makespans and per-rank peaks are
// those of the same orders run with unit costs.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Scheduling/VShapeGreedy.h"

#include "OrderText.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace pipesched::scheduling;

namespace {


OrderShape shapeOf(int64_t p, int64_t m) {
  return OrderShape{/*stages=*/2 * p, /*microbatches=*/m, /*workers=*/p,
                    /*splitBackward=*/true};
}

/// Each rank's peak of live activations, in stage activations: a forward
/// adds one, its weight half frees it.
std::vector<int64_t> peakLive(const WorkerOrders &orders) {
  std::vector<int64_t> peaks;
  for (const std::vector<JobCoord> &rank : orders) {
    int64_t live = 0, peak = 0;
    for (const JobCoord &j : rank) {
      live += j.direction == Direction::Forward          ? 1
              : j.direction == Direction::BackwardWeight ? -1
                                                         : 0;
      peak = std::max(peak, live);
    }
    peaks.push_back(peak);
  }
  return peaks;
}

/// The paper's activation memory in microbatches of a whole rank (two
/// stages): (p+4)//3 for V-Min, (p+2)//2 for V-Half, against 1F1B's p;
/// never more than the m microbatches there are.
int64_t paperPeak(VShapeMemory memory, int64_t p, int64_t m) {
  int64_t perRank = memory == VShapeMemory::Min ? (p + 4) / 3 : (p + 2) / 2;
  return 2 * std::min(m, perRank);
}

/// Runs the orders with unit costs: a job starts once its rank's previous
/// job and its producers have ended (F(s, b) after F(s-1, b); B(s, b) after
/// B(s+1, b), or after F(s, b) on the last stage; W(s, b) after B(s, b)).
/// Returns the makespan, or -1 when the ranks wait on each other. verify-
/// StaticOrder checks only each rank on its own; this checks the ranks
/// together.
int64_t unitMakespan(int64_t p, int64_t m, const WorkerOrders &orders) {
  int64_t stages = 2 * p;
  std::vector<int64_t> end(size_t(stages * m * 3), -1);
  auto endOf = [&](int64_t s, int64_t b, Direction d) -> int64_t & {
    return end[size_t(jobCoordIndex(m, 3, JobCoord{s, b, d}))];
  };
  std::vector<size_t> next(orders.size(), 0);
  std::vector<int64_t> clock(orders.size(), 0);
  size_t left = 0;
  for (const std::vector<JobCoord> &rank : orders)
    left += rank.size();
  int64_t makespan = 0;
  for (bool progress = true; progress && left > 0;) {
    progress = false;
    for (size_t r = 0; r < orders.size(); ++r)
      while (next[r] < orders[r].size()) {
        const JobCoord &j = orders[r][next[r]];
        int64_t ready = -1;
        if (j.direction == Direction::Forward)
          ready =
              j.stage == 0 ? 0 : endOf(j.stage - 1, j.microbatch, j.direction);
        else if (j.direction == Direction::Backward)
          ready = j.stage == stages - 1
                      ? endOf(j.stage, j.microbatch, Direction::Forward)
                      : endOf(j.stage + 1, j.microbatch, j.direction);
        else
          ready = endOf(j.stage, j.microbatch, Direction::Backward);
        if (ready < 0)
          break;
        clock[r] = std::max(clock[r], ready) + 1;
        endOf(j.stage, j.microbatch, j.direction) = clock[r];
        makespan = std::max(makespan, clock[r]);
        ++next[r];
        --left;
        progress = true;
      }
  }
  return left == 0 ? makespan : -1;
}

struct Reference {
  VShapeMemory memory;
  int64_t p, m, makespan;
  std::vector<int64_t> peaks;
  std::vector<std::string> ranks;
};

// clang-format off
const std::vector<Reference> &references() {
  static const std::vector<Reference> table = {
    {VShapeMemory::Min, 4, 8, /*makespan=*/59, /*peaks=*/{4, 4, 4, 4},
     {
         "0F0 0F1 0F2 7F0 7B0 7W0 7F1 7B1 7W1 0B0 0W0 0F3 7F2 7B2 0B1 7W2 "
         "0W1 0F4 7F3 7B3 0B2 7W3 0W2 0F5 7F4 7B4 0B3 7W4 0W3 0F6 7F5 7B5 "
         "0B4 7W5 0W4 0F7 7F6 7B6 0B5 7W6 0W5 7F7 7B7 0B6 7W7 0W6 0B7 0W7",
         "1F0 1F1 6F0 6F1 6B0 6W0 1F2 1B0 6B1 6W1 1W0 6F2 1F3 1B1 6B2 6W2 "
         "1W1 6F3 1F4 1B2 6B3 6W3 1W2 6F4 1F5 1B3 6B4 6W4 1W3 6F5 1F6 1B4 "
         "6B5 6W5 1W4 6F6 1F7 1B5 6B6 6W6 1W5 6F7 1B6 6B7 6W7 1W6 1B7 1W7",
         "2F0 2F1 5F0 5F1 5B0 5W0 2F2 2B0 2W0 5B1 5F2 5W1 2B1 2F3 2W1 5B2 "
         "5F3 5W2 2B2 2F4 2W2 5B3 5F4 5W3 2B3 2F5 2W3 5B4 5F5 5W4 2B4 2F6 "
         "2W4 5B5 5F6 5W5 2B5 2F7 2W5 5B6 5F7 5W6 2B6 2W6 5B7 5W7 2B7 2W7",
         "3F0 4F0 3F1 4F1 4B0 3B0 4W0 3W0 3F2 4F2 4B1 3B1 4W1 3W1 3F3 4F3 "
         "4B2 3B2 4W2 3W2 3F4 4F4 4B3 3B3 4W3 3W3 3F5 4F5 4B4 3B4 4W4 3W4 "
         "3F6 4F6 4B5 3B5 4W5 3W5 3F7 4F7 4B6 3B6 4W6 3W6 4B7 3B7 4W7 3W7",
     }},
    {VShapeMemory::Half, 4, 8, /*makespan=*/53, /*peaks=*/{6, 6, 6, 6},
     {
         "0F0 0F1 0F2 0F3 0F4 7F0 7B0 7W0 7F1 7B1 7W1 7F2 0B0 7B2 7W2 7F3 "
         "0W0 0F5 0B1 7B3 7W3 7F4 0W1 0F6 0B2 7B4 7W4 7F5 0W2 0F7 0B3 7B5 "
         "7W5 7F6 7B6 7W6 0B4 0W3 0W4 7F7 7B7 0B5 7W7 0B6 0W5 0W6 0B7 0W7",
         "1F0 1F1 1F2 1F3 6F0 6F1 6B0 6W0 6F2 6B1 6W1 1B0 1W0 1F4 6F3 6B2 "
         "6W2 1B1 1W1 1F5 6F4 6B3 6W3 1B2 1W2 1F6 6F5 6B4 6W4 1B3 1F7 1W3 "
         "6F6 6B5 6W5 1B4 6B6 6W6 6F7 1W4 1B5 6B7 1B6 6W7 1W5 1W6 1B7 1W7",
         "2F0 2F1 2F2 5F0 5F1 5F2 5B0 5W0 2F3 5B1 2B0 5W1 2W0 5F3 2F4 2B1 "
         "5B2 5W2 5F4 2W1 2F5 2B2 5B3 5W3 5F5 2W2 2F6 2B3 5B4 5W4 5F6 2W3 "
         "2F7 2B4 5B5 5W5 5F7 5B6 2B5 5W6 2B6 5B7 5W7 2W4 2B7 2W5 2W6 2W7",
         "3F0 4F0 3F1 4F1 3F2 4F2 4B0 4W0 3B0 3W0 3F3 4F3 4B1 4W1 3B1 3W1 "
         "3F4 4F4 4B2 4W2 3B2 3W2 3F5 4F5 4B3 4W3 3B3 3F6 3W3 4F6 4B4 3B4 "
         "4W4 3F7 3W4 4F7 4B5 3B5 4B6 3B6 4W5 4W6 4B7 3B7 4W7 3W5 3W6 3W7",
     }},
    {VShapeMemory::Min, 2, 4, /*makespan=*/27, /*peaks=*/{3, 4},
     {
         "0F0 0F1 3F0 3B0 3W0 0B0 0W0 3F1 3B1 3W1 0F2 0B1 0W1 3F2 3B2 3W2 "
         "0F3 0B2 0W2 3F3 3B3 3W3 0B3 0W3",
         "1F0 2F0 2B0 1B0 1F1 2F1 2W0 1W0 2B1 1B1 1F2 2F2 2W1 1W1 2B2 1B2 "
         "1F3 2F3 2W2 1W2 2B3 1B3 2W3 1W3",
     }},
    {VShapeMemory::Half, 2, 4, /*makespan=*/25, /*peaks=*/{4, 4},
     {
         "0F0 0F1 0F2 3F0 3B0 3W0 3F1 0B0 3B1 3W1 3F2 0W0 0F3 0B1 3B2 3W2 "
         "3F3 3B3 0B2 3W3 0B3 0W1 0W2 0W3",
         "1F0 2F0 1F1 2F1 2B0 2W0 1B0 1W0 1F2 2F2 2B1 1B1 2W1 1F3 1W1 2F3 "
         "2B2 1B2 2B3 1B3 2W2 2W3 1W2 1W3",
     }},
    {VShapeMemory::Min, 3, 6, /*makespan=*/41, /*peaks=*/{4, 4, 4},
     {
         "0F0 0F1 0F2 5F0 5B0 5W0 5F1 0B0 5B1 5W1 0W0 5F2 0F3 0B1 5B2 5W2 "
         "0W1 5F3 0F4 0B2 5B3 5W3 0W2 5F4 0F5 0B3 5B4 5W4 0W3 5F5 5B5 0B4 "
         "5W5 0W4 0B5 0W5",
         "1F0 1F1 4F0 4F1 4B0 4W0 1B0 1F2 1W0 4B1 4F2 4W1 1B1 1F3 1W1 4B2 "
         "4F3 4W2 1B2 1F4 1W2 4B3 4F4 4W3 1B3 1F5 1W3 4B4 4F5 4W4 1B4 4B5 "
         "4W5 1W4 1B5 1W5",
         "2F0 3F0 2F1 3F1 3B0 2B0 3W0 2W0 2F2 3F2 3B1 2B1 3W1 2W1 2F3 3F3 "
         "3B2 2B2 3W2 2W2 2F4 3F4 3B3 2B3 3W3 2W3 2F5 3F5 3B4 2B4 3W4 2W4 "
         "3B5 2B5 3W5 2W5",
     }},
    {VShapeMemory::Half, 3, 6, /*makespan=*/41, /*peaks=*/{4, 4, 4},
     {
         "0F0 0F1 0F2 5F0 5B0 5W0 5F1 5B1 5W1 0B0 0W0 0F3 5F2 5B2 5W2 0B1 "
         "0W1 0F4 5F3 5B3 5W3 0B2 0W2 0F5 5F4 5B4 5W4 0B3 0W3 5F5 5B5 0B4 "
         "5W5 0W4 0B5 0W5",
         "1F0 1F1 4F0 4F1 4B0 4W0 1F2 1B0 4B1 4W1 4F2 1W0 1F3 1B1 4B2 4W2 "
         "4F3 1W1 1F4 1B2 4B3 4W3 4F4 1W2 1F5 1B3 4B4 4W4 4F5 1W3 1B4 4B5 "
         "4W5 1W4 1B5 1W5",
         "2F0 3F0 2F1 3F1 3B0 3W0 2B0 2W0 2F2 3F2 3B1 3W1 2B1 2W1 2F3 3F3 "
         "3B2 3W2 2B2 2W2 2F4 3F4 3B3 2B3 3W3 2F5 2W3 3F5 3B4 2B4 3W4 2W4 "
         "3B5 2B5 3W5 2W5",
     }},
    {VShapeMemory::Min, 6, 12, /*makespan=*/89, /*peaks=*/{6, 6, 6, 6, 6, 6},
     {
         "0F0 0F1 0F2 0F3 0F4 11F0 11B0 11W0 11F1 11B1 11W1 11F2 0B0 11B2 "
         "11W2 0W0 11F3 0F5 0B1 11B3 11W3 0W1 11F4 0F6 0B2 11B4 11W4 0W2 "
         "11F5 0F7 0B3 11B5 11W5 0W3 11F6 0F8 0B4 11B6 11W6 0W4 11F7 0F9 0B5 "
         "11B7 11W7 0W5 11F8 0F10 0B6 11B8 11W8 0W6 11F9 0F11 0B7 11B9 11W9 "
         "0W7 11F10 11B10 0B8 11W10 0W8 11F11 11B11 0B9 11W11 0W9 0B10 0W10 "
         "0B11 0W11",
         "1F0 1F1 1F2 1F3 10F0 10F1 10B0 10W0 10B1 10F2 10W1 1B0 1F4 1W0 "
         "10B2 10F3 10W2 1B1 1F5 1W1 10B3 10F4 10W3 1B2 1F6 1W2 10B4 10F5 "
         "10W4 1B3 1F7 1W3 10B5 10F6 10W5 1B4 1F8 1W4 10B6 10F7 10W6 1B5 1F9 "
         "1W5 10B7 10F8 10W7 1B6 1F10 1W6 10B8 10F9 10W8 1B7 1F11 1W7 10B9 "
         "10F10 10W9 1B8 10B10 10W10 1W8 10F11 1B9 10B11 10W11 1W9 1B10 1W10 "
         "1B11 1W11",
         "2F0 2F1 2F2 2F3 9F0 9F1 9B0 9W0 9F2 9B1 9W1 2B0 2W0 2F4 9F3 9B2 "
         "2B1 9W2 2W1 2F5 9F4 9B3 2B2 9W3 2W2 2F6 9F5 9B4 2B3 9W4 2W3 2F7 "
         "9F6 9B5 2B4 9W5 2W4 2F8 9F7 9B6 2B5 9W6 2W5 2F9 9F8 9B7 2B6 9W7 "
         "2W6 2F10 9F9 9B8 2B7 9W8 2W7 2F11 9F10 9B9 2B8 9W9 2W8 9B10 9F11 "
         "9W10 2B9 2W9 9B11 2B10 9W11 2W10 2B11 2W11",
         "3F0 3F1 3F2 8F0 8F1 8F2 8B0 8W0 3F3 8B1 8W1 3B0 3W0 8F3 3F4 3B1 "
         "8B2 8W2 3W1 8F4 3F5 3B2 8B3 8W3 3W2 8F5 3F6 3B3 8B4 8W4 3W3 8F6 "
         "3F7 3B4 8B5 8W5 3W4 8F7 3F8 3B5 8B6 8W6 3W5 8F8 3F9 3B6 8B7 8W7 "
         "3W6 8F9 3F10 3B7 8B8 8W8 3W7 8F10 3F11 3B8 8B9 8W9 3W8 8F11 8B10 "
         "3B9 8W10 3W9 3B10 8B11 8W11 3W10 3B11 3W11",
         "4F0 4F1 4F2 7F0 7F1 7F2 7B0 7W0 4F3 4B0 4W0 7B1 7W1 7F3 4B1 4F4 "
         "4W1 7B2 7F4 7W2 4B2 4F5 4W2 7B3 7F5 7W3 4B3 4F6 4W3 7B4 7F6 7W4 "
         "4B4 4F7 4W4 7B5 7F7 7W5 4B5 4F8 4W5 7B6 7F8 7W6 4B6 4F9 4W6 7B7 "
         "7F9 7W7 4B7 4F10 4W7 7B8 7F10 7W8 4B8 4F11 4W8 7B9 7F11 7W9 4B9 "
         "7B10 7W10 4W9 4B10 4W10 7B11 7W11 4B11 4W11",
         "5F0 6F0 5F1 6F1 5F2 6F2 6B0 5B0 6W0 5W0 5F3 6F3 6B1 5B1 6W1 5W1 "
         "5F4 6F4 6B2 5B2 6W2 5W2 5F5 6F5 6B3 5B3 6W3 5W3 5F6 6F6 6B4 5B4 "
         "6W4 5W4 5F7 6F7 6B5 5B5 6W5 5W5 5F8 6F8 6B6 5B6 6W6 5W6 5F9 6F9 "
         "6B7 5B7 6W7 5W7 5F10 6F10 6B8 5B8 6W8 5W8 5F11 6F11 6B9 5B9 6W9 "
         "5W9 6B10 5B10 6W10 5W10 6B11 5B11 6W11 5W11",
     }},
    {VShapeMemory::Half, 6, 12, /*makespan=*/83, /*peaks=*/{8, 8, 8, 8, 8, 8},
     {
         "0F0 0F1 0F2 0F3 0F4 0F5 0F6 11F0 11B0 11W0 11F1 11B1 11W1 11F2 "
         "11B2 11W2 11F3 0B0 11B3 11W3 11F4 0W0 0F7 0B1 11B4 11W4 11F5 0W1 "
         "0F8 0B2 11B5 11W5 11F6 0W2 0F9 0B3 11B6 11W6 11F7 0W3 0F10 0B4 "
         "11B7 11W7 11F8 0W4 0F11 0B5 11B8 11W8 11F9 11B9 11W9 0B6 0W5 0W6 "
         "11F10 11B10 11W10 0B7 0W7 11F11 11B11 0B8 11W11 0B9 0W8 0W9 0B10 "
         "0W10 0B11 0W11",
         "1F0 1F1 1F2 1F3 1F4 1F5 10F0 10F1 10B0 10W0 10F2 10B1 10W1 10B2 "
         "10F3 10W2 1B0 1W0 1F6 10F4 10B3 10W3 1B1 1W1 1F7 10F5 10B4 10W4 "
         "1B2 1W2 1F8 10F6 10B5 10W5 1B3 1W3 1F9 10F7 10B6 10W6 1B4 1W4 1F10 "
         "10F8 10B7 10W7 1B5 1F11 1W5 10F9 10B8 10W8 1B6 10B9 10W9 10F10 1W6 "
         "1B7 10B10 10W10 10F11 1W7 1B8 10B11 1B9 10W11 1W8 1W9 1B10 1W10 "
         "1B11 1W11",
         "2F0 2F1 2F2 2F3 2F4 9F0 9F1 9F2 9B0 9W0 2F5 9B1 9W1 9F3 9B2 9W2 "
         "2B0 2W0 9F4 2F6 2B1 9B3 9W3 9F5 2W1 2F7 2B2 9B4 9W4 9F6 2W2 2F8 "
         "2B3 9B5 9W5 9F7 2W3 2F9 2B4 9B6 9W6 9F8 2W4 2F10 2B5 9B7 9W7 9F9 "
         "2W5 2F11 2B6 9B8 9W8 9F10 9B9 9W9 2B7 2W6 2W7 9F11 9B10 2B8 9W10 "
         "2B9 9B11 9W11 2W8 2B10 2W9 2W10 2B11 2W11",
         "3F0 3F1 3F2 3F3 3F4 8F0 8F1 8F2 8B0 8W0 8F3 8B1 8W1 3F5 3B0 3W0 "
         "8F4 8B2 8W2 3B1 3W1 3F6 8F5 8B3 8W3 3B2 3W2 3F7 8F6 8B4 8W4 3B3 "
         "3W3 3F8 8F7 8B5 8W5 3B4 3W4 3F9 8F8 8B6 8W6 3B5 3F10 3W5 8F9 8B7 "
         "8W7 3B6 3F11 3W6 8F10 8B8 8W8 3B7 8B9 8W9 8F11 3W7 3B8 8B10 3B9 "
         "8W10 3W8 8B11 3B10 8W11 3W9 3W10 3B11 3W11",
         "4F0 4F1 4F2 7F0 4F3 7F1 7F2 7F3 7B0 7W0 4F4 7B1 4B0 7W1 4W0 7F4 "
         "4F5 4B1 7B2 7W2 7F5 4W1 4F6 4B2 7B3 7W3 7F6 4W2 4F7 4B3 7B4 7W4 "
         "7F7 4W3 4F8 4B4 7B5 7W5 7F8 4W4 4F9 4B5 7B6 7W6 7F9 4W5 4F10 4B6 "
         "7B7 7W7 7F10 4W6 4F11 4B7 7B8 7W8 7F11 7B9 4B8 7W9 4B9 7B10 7W10 "
         "4W7 4B10 7B11 7W11 4W8 4B11 4W9 4W10 4W11",
         "5F0 6F0 5F1 6F1 5F2 6F2 5F3 6F3 6B0 6W0 5B0 5W0 5F4 6F4 6B1 6W1 "
         "5B1 5W1 5F5 6F5 6B2 6W2 5B2 5W2 5F6 6F6 6B3 6W3 5B3 5W3 5F7 6F7 "
         "6B4 6W4 5B4 5W4 5F8 6F8 6B5 6W5 5B5 5W5 5F9 6F9 6B6 5B6 6W6 5F10 "
         "5W6 6F10 6B7 5B7 6W7 5F11 5W7 6F11 6B8 5B8 6B9 5B9 6W8 6W9 6B10 "
         "5B10 6W10 5W8 6B11 5B11 6W11 5W9 5W10 5W11",
     }},
    {VShapeMemory::Min, 1, 3, /*makespan=*/18, /*peaks=*/{2},
     {
         "0F0 1F0 1B0 0B0 1W0 0W0 0F1 1F1 1B1 0B1 1W1 0W1 0F2 1F2 1B2 0B2 "
         "1W2 0W2",
     }},
    {VShapeMemory::Half, 1, 3, /*makespan=*/18, /*peaks=*/{2},
     {
         "0F0 1F0 1B0 1W0 0B0 0W0 0F1 1F1 1B1 1W1 0B1 0W1 0F2 1F2 1B2 0B2 "
         "1W2 0W2",
     }},

  };
  return table;
}
// clang-format on

std::string nameOf(const Reference &ref) {
  return std::string(ref.memory == VShapeMemory::Min ? "V-Min" : "V-Half") +
         " p=" + std::to_string(ref.p) + " m=" + std::to_string(ref.m);
}

} // namespace

TEST(VShapeGreedy, MatchesZbvGreedyOrders) {
  for (const Reference &ref : references()) {
    SCOPED_TRACE(nameOf(ref));
    ASSERT_EQ(checkVShapeGreedy(ref.p, ref.m, ref.memory), "");
    WorkerOrders orders = vShapeGreedy(ref.p, ref.m, ref.memory);
    ASSERT_EQ(orders.size(), size_t(ref.p));
    for (size_t r = 0; r < orders.size(); ++r)
      EXPECT_EQ(renderOrder(orders[r]), ref.ranks[r]) << "rank " << r;
    EXPECT_EQ(verifyStaticOrder(shapeOf(ref.p, ref.m), orders), "");
  }
}

// V-Min p=4 and p=6: 4 and 6 stage activations per rank, (p+4)//3 = 2 and
// 3 microbatches of a rank's model against 1F1B's 4 and 6; V-Half 6 and 8,
// (p+2)//2 = 3 and 4.
TEST(VShapeGreedy, PeakActivationIsThePapers) {
  for (const Reference &ref : references()) {
    SCOPED_TRACE(nameOf(ref));
    WorkerOrders orders = vShapeGreedy(ref.p, ref.m, ref.memory);
    std::vector<int64_t> peaks = peakLive(orders);
    EXPECT_EQ(peaks, ref.peaks);
    EXPECT_EQ(*std::max_element(peaks.begin(), peaks.end()),
              paperPeak(ref.memory, ref.p, ref.m));
  }
}

// Unit costs: each rank has 6m unit jobs (48 at m=8); V-Half p=4, m=8 ends
// at 53, V-Min at 59, as the reference orders do when run the same way.
TEST(VShapeGreedy, RunsWithoutDeadlock) {
  for (const Reference &ref : references()) {
    SCOPED_TRACE(nameOf(ref));
    WorkerOrders orders = vShapeGreedy(ref.p, ref.m, ref.memory);
    EXPECT_EQ(unitMakespan(ref.p, ref.m, orders), ref.makespan);
  }
}

TEST(VShapeGreedy, SweepVerifies) {
  for (VShapeMemory memory : {VShapeMemory::Min, VShapeMemory::Half})
    for (int64_t p = 1; p <= 8; ++p)
      for (int64_t m = 1; m <= 24; ++m) {
        SCOPED_TRACE((memory == VShapeMemory::Min ? "V-Min p=" : "V-Half p=") +
                     std::to_string(p) + " m=" + std::to_string(m));
        ASSERT_EQ(checkVShapeGreedy(p, m, memory), "");
        WorkerOrders orders = vShapeGreedy(p, m, memory);
        ASSERT_EQ(orders.size(), size_t(p));
        ASSERT_EQ(verifyStaticOrder(shapeOf(p, m), orders), "");
        for (size_t r = 0; r < orders.size(); ++r) {
          EXPECT_EQ(orders[r].size(), size_t(6 * m));
          for (const JobCoord &j : orders[r])
            ASSERT_EQ(vStageWorker(p, j.stage), int64_t(r));
        }
        EXPECT_GT(unitMakespan(p, m, orders), 0);
        std::vector<int64_t> peaks = peakLive(orders);
        EXPECT_EQ(*std::max_element(peaks.begin(), peaks.end()),
                  paperPeak(memory, p, m));
        EXPECT_TRUE(vShapeGreedy(p, m, memory) == orders);
      }
}

TEST(VShapeGreedy, RefusesShapesWithoutRanksOrMicrobatches) {
  EXPECT_NE(checkVShapeGreedy(0, 4, VShapeMemory::Min), "");
  EXPECT_NE(checkVShapeGreedy(4, 0, VShapeMemory::Half), "");
  EXPECT_NE(checkVShapeGreedy(-1, -1, VShapeMemory::Min), "");
  EXPECT_NE(checkVShapeGreedy(int64_t(1) << 40, 8, VShapeMemory::Min), "");
  EXPECT_NE(checkVShapeGreedy(2048, 2048, VShapeMemory::Half), "");
  EXPECT_TRUE(vShapeGreedy(0, 4, VShapeMemory::Min).empty());
  EXPECT_TRUE(vShapeGreedy(4, 0, VShapeMemory::Half).empty());
  EXPECT_EQ(checkVShapeGreedy(1, 1, VShapeMemory::Min), "");
}
