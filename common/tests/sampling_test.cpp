// SPDX-License-Identifier: Apache-2.0
#include "common/sampling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fabricbench {
namespace {

Summary of(std::vector<double> samples) { return summarize(samples); }

TEST(RelativeStandardError, HandWorked) {
  // mean 3, stdev sqrt(2.5), 5 samples: sqrt(2.5) / 3 / sqrt(5) = sqrt(0.5) / 3
  EXPECT_DOUBLE_EQ(relative_standard_error(of({1, 2, 3, 4, 5})), std::sqrt(0.5) / 3);
}

TEST(StopRule, StopsOnLowNoiseOnlyAfterMinimumTimeAndSamples) {
  const StopRule rule{0.01, 0.5, 10.0};
  const Summary quiet = of({1.0, 1.0, 1.0, 1.0, 1.0});
  EXPECT_EQ(rule.decide(quiet, 0.1), "");  // quiet, but not measured long enough
  EXPECT_EQ(rule.decide(quiet, 0.6), "noise");
  EXPECT_EQ(rule.decide(of({1.0, 1.0}), 0.6), "");  // too few samples to judge
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
