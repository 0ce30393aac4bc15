// SPDX-License-Identifier: Apache-2.0
#include "common/sampling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fabricbench {
namespace {

Summary of(std::vector<double> samples) { return summarize(samples); }

TEST(RelativeMedianError, HandWorked) {
  // median 3, absolute deviations {2,1,0,1,2} -> MAD 1, 5 samples: 1.2533 x 1.4826 x 1 / 3 / sqrt(5)
  EXPECT_DOUBLE_EQ(relative_median_error(of({1, 2, 3, 4, 5})), 1.2533 * 1.4826 / 3 / std::sqrt(5.0));
  // One launch hiccup 100x the rest moves the mean's error a lot and the median's not at all.
  EXPECT_DOUBLE_EQ(relative_median_error(of({1, 2, 3, 4, 500})), 1.2533 * 1.4826 / 3 / std::sqrt(5.0));
}

TEST(StopRule, StopsOnLowNoiseOnlyAfterMinimumTimeAndSamples) {
  const StopRule rule{0.01, 0.5, 10.0};
  const Summary quiet = of(std::vector<double>(StopRule::kMinSamples, 1.0));
  EXPECT_EQ(rule.decide(quiet, 0.1), "");  // quiet, but not measured long enough
  EXPECT_EQ(rule.decide(quiet, 0.6), "noise");
  EXPECT_EQ(rule.decide(of({1.0, 1.0, 1.0, 1.0, 1.0}), 0.6), "");  // too few samples to judge
}

TEST(StopRule, NextRoundAsksForWhatTheSpreadNeedsWithinBounds) {
  const StopRule rule{0.01, 0.0, 10.0};
  // 10 samples: median 1.0, absolute deviations 0 x4, 0.01 x2, 0.02 x4 -> MAD 0.01.
  std::vector<double> ten = {0.98, 0.98, 0.99, 1.0, 1.0, 1.0, 1.0, 1.01, 1.02, 1.02};
  const Summary s = of(ten);
  ASSERT_NEAR(s.mad, 0.01, 1e-12);
  // MAD 0.01 -> error 1.2533 x 1.4826 x 0.01 / sqrt(10) = 0.5876 %: already below, the floor of a
  // quarter of those taken (3) applies.
  EXPECT_EQ(rule.next_round(s, 0.001, 1e-4), 3u);
  const StopRule tight{0.001, 0.0, 10.0};  // 0.5876 / 0.1 = 5.876: 10 x 34.5 = 345 needed, capped at 10 more
  EXPECT_EQ(tight.next_round(s, 0.001, 1e-4), 10u);
  EXPECT_EQ(tight.next_round(s, 9.99955, 1e-4), 5u);  // 0.45 ms of the 10 s left: 5 samples
  const StopRule timed{0.01, 0.5, 10.0};              // at least 0.5 s at 0.125 s a sample: 4, above the quarter
  EXPECT_EQ(timed.next_round(s, 0.0, 0.125), 4u);
}

TEST(StopRule, KeepsGoingWhileNoisyUntilMaxTime) {
  const StopRule rule{0.01, 0.0, 2.0};
  const Summary noisy = of({1, 2, 1, 2, 1, 2});
  EXPECT_EQ(rule.decide(noisy, 1.0), "");
  EXPECT_EQ(rule.decide(noisy, 2.0), "max-time");
}

TEST(ClockResolution, IsPositiveAndBelowAMillisecond) {
  const double r = clock_resolution_seconds();
  EXPECT_GT(r, 0);
  EXPECT_LT(r, 1e-3);
}

}  // namespace
}  // namespace fabricbench
