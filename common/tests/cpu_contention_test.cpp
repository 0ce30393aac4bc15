// SPDX-License-Identifier: Apache-2.0
// The contention meter on this very thread, and the fold of one process's reading.
#include "common/cpu_contention.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "common/singleton_plane.hpp"

namespace fabricbench {
namespace {

TEST(CpuContention, ThisThreadsFractionsAreFractions) {
  const ContentionMeter meter;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;  // runnable the whole time
  const CpuContention c = meter.local();
  ASSERT_TRUE(c.known) << "Linux keeps /proc/thread-self/schedstat and /proc/stat";
  EXPECT_GE(c.runqueue_wait, 0.0);
  EXPECT_LE(c.runqueue_wait, 1.0);
  EXPECT_GE(c.steal, 0.0);
  EXPECT_LE(c.steal, 1.0);
}

TEST(CpuContention, TheFoldCountsWaitsThatMatterAsLostProgress) {
  SingletonPlane alone;
  CpuContention mine;
  mine.known = true;
  mine.runqueue_wait = 0.5;
  CpuContention all = fold_over_ranks(mine, alone);
  EXPECT_NEAR(all.slowdown, 2.0, 1e-12);  // waiting half the time: up to twice as slow
  mine.runqueue_wait = 0.01;              // below kNotableContention: a quiet node's
  all = fold_over_ranks(mine, alone);
  EXPECT_DOUBLE_EQ(all.slowdown, 1.0);
  EXPECT_EQ(to_json(all)["runqueue_wait"].get<double>(), 0.01);
  mine.known = false;
  EXPECT_TRUE(to_json(fold_over_ranks(mine, alone)).is_null());
}

}  // namespace
}  // namespace fabricbench
