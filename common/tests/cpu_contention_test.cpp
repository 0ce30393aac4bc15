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

TEST(CpuContention, TheLayoutExplainsRanksSharingCores) {
  const RankCpus two_cores_a{"boot-a", {0, 1}}, two_cores_b{"boot-b", {0, 1}};
  // The fake cluster: three "hosts" in namespaces of one kernel, one rank each, two cores.
  EXPECT_NEAR(layout_slowdown({two_cores_a, two_cores_a, two_cores_a}), 3.375, 1e-9);
  // Two ranks on two cores, or ranks on machines of their own: nothing to explain.
  EXPECT_DOUBLE_EQ(layout_slowdown({two_cores_a, two_cores_a}), 1.0);
  EXPECT_DOUBLE_EQ(layout_slowdown({two_cores_a, two_cores_b, RankCpus{"boot-c", {0, 1}}}), 1.0);
  // Ranks bound to a core each share nothing; two bound to one core wait half the time each.
  EXPECT_DOUBLE_EQ(layout_slowdown({{"m", {0}}, {"m", {1}}, {"m", {2}}}), 1.0);
  EXPECT_NEAR(layout_slowdown({{"m", {0}}, {"m", {0}}}), 4.0, 1e-9);
  // This process: one machine, the CPUs it may run on; alone it shares nothing.
  SingletonPlane alone;
  EXPECT_FALSE(this_rank_cpus("fallback").cpus.empty());
  EXPECT_DOUBLE_EQ(layout_slowdown(alone), 1.0);
}

}  // namespace
}  // namespace fabricbench
