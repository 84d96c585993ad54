// The bounded wait of abortJob (abort_job.h): a backend abort that blocks
// forever must not keep the job from ending.
#include "comm/bounded_call.h"
#include "comm/startup_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace pipesched::runtime;
using namespace std::chrono;

namespace {

TEST(BoundedCall, ReturnsWhenTheWorkReturns) {
  bool ran = false;
  const auto start = steady_clock::now();
  BoundedCall c = callWithin(milliseconds(10000), [&] { ran = true; });
  EXPECT_EQ(c.outcome, BoundedCall::Outcome::Returned);
  EXPECT_TRUE(ran);
  EXPECT_LT(steady_clock::now() - start, seconds(5)); // did not wait out the bound
}

TEST(BoundedCall, GivesUpOnWorkThatBlocksForever) {
  // Blocks until released, after the checks; shared, as the thread
  // outlives the call.
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto finished = std::make_shared<std::atomic<bool>>(false);
  const auto start = steady_clock::now();
  BoundedCall c = callWithin(milliseconds(200), [release, finished] {
    while (!*release)
      std::this_thread::sleep_for(milliseconds(1));
    *finished = true;
  });
  const auto waited = steady_clock::now() - start;
  EXPECT_EQ(c.outcome, BoundedCall::Outcome::TimedOut);
  EXPECT_GE(waited, milliseconds(200));
  EXPECT_LT(waited, seconds(5));
  EXPECT_FALSE(*finished);
  // Let the thread end, so that it does not outlive the test binary.
  *release = true;
  for (int i = 0; i < 5000 && !*finished; ++i)
    std::this_thread::sleep_for(milliseconds(1));
  EXPECT_TRUE(*finished);
}

TEST(BoundedCall, ReportsAnException) {
  BoundedCall c = callWithin(milliseconds(10000),
                             [] { throw std::runtime_error("ncclCommAbort: failed"); });
  EXPECT_EQ(c.outcome, BoundedCall::Outcome::Threw);
  EXPECT_EQ(c.error, "ncclCommAbort: failed");
}

// MPI_Init's deadline: past it the process ends with status 2, naming its
// rank; disarmed in time, the watchdog costs nothing and says nothing.
TEST(StartupWatchdog, EndsTheProcessPastItsDeadline) {
  EXPECT_EXIT(
      {
        StartupWatchdog watchdog(0.2, 3);
        std::this_thread::sleep_for(std::chrono::seconds(10));
      },
      testing::ExitedWithCode(2),
      "^pipeline-run: rank 3 timed out after 0.2 s in MPI_Init: not every process of "
      "the job started");
}

TEST(StartupWatchdog, DisarmedInTimeEndsAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  {
    StartupWatchdog watchdog(60, 0);
    watchdog.disarm();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

} // namespace
