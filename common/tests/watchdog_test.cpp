// SPDX-License-Identifier: Apache-2.0
// The watchdog for real: a wait past its deadline ends the process with the diagnosis and exit 3;
// waits that end in time, or no wait at all, never fire.
#include "common/watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/error.hpp"

namespace fabricbench {
namespace {

using namespace std::chrono_literals;

class WatchdogDeathTest : public ::testing::Test {
 protected:
  // The watchdog is a thread: the child must be a fresh process, not a fork of a threaded one.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WatchdogDeathTest, AWaitPastTheDeadlineEndsTheProcessNamingTheActivity) {
  EXPECT_EXIT(
      {
        Watchdog watchdog(0.05, "[rank 3 on node07]");
        watchdog.set_activity("all_reduce out-of-place, 1 MiB");
        watchdog.begin_wait();
        std::this_thread::sleep_for(5s);
      },
      ::testing::ExitedWithCode(kExitFailure),
      R"(\[rank 3 on node07\] timeout: all_reduce out-of-place, 1 MiB did not finish within 0.05 s)");
}

TEST(Watchdog, WaitsThatEndInTimeAndIdleTimeNeverFire) {
  Watchdog watchdog(0.05, "[rank 0]");
  for (int i = 0; i < 5; ++i) {
    Watchdog::Scope wait(watchdog);
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);  // no wait in progress: nothing to time out
  SUCCEED();
}

TEST(Watchdog, ZeroTimeoutIsOff) {
  Watchdog watchdog(0, "[rank 0]");
  watchdog.begin_wait();
  std::this_thread::sleep_for(100ms);
  watchdog.end_wait();
  EXPECT_EQ(watchdog.timeout_seconds(), 0);
}

}  // namespace
}  // namespace fabricbench
