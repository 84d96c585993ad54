// The bounded wait of abortJob (abort_job.h): a backend abort that blocks
// forever must not keep the job from ending.
#include "bounded_call.h"

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

} // namespace
