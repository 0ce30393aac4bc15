// SPDX-License-Identifier: Apache-2.0
#include "common/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/wrong_elements.hpp"

namespace fabricbench {
namespace {

TEST(Summarize, HandWorkedFiveSamples) {
  const std::vector<double> samples{5, 1, 4, 2, 3};
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(2.5));  // sum of squares 10 over n-1 = 4
  EXPECT_DOUBLE_EQ(s.p99, 4.96);              // 4 + 0.96 * (5 - 4)
  EXPECT_DOUBLE_EQ(s.relative_noise(), std::sqrt(2.5) / 3);
}

TEST(Summarize, EvenCountMedianInterpolates) {
  const std::vector<double> samples{1, 2, 3, 10};
  EXPECT_DOUBLE_EQ(summarize(samples).median, 2.5);
}

TEST(Summarize, SingleSampleHasNoSpread) {
  const std::vector<double> samples{7};
  const Summary s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.p99, 7);
}

TEST(Summarize, EmptyIsAllZero) {
  const Summary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_DOUBLE_EQ(s.relative_noise(), 0);
}

TEST(WrongElements, CountsCheckedRowsAndSaysWhenNoneWasChecked) {
  std::vector<ResultRow> rows(3);
  for (ResultRow& r : rows) r.wrong = -1;  // -c 0
  EXPECT_EQ(wrong_elements(rows), 0);
  EXPECT_EQ(wrong_total_of(rows), -1);
  rows[1].wrong = 0;
  EXPECT_EQ(wrong_total_of(rows), 0);
  rows[2].wrong = 5;
  EXPECT_EQ(wrong_total_of(rows), 5);
  rows[0].wrong = std::numeric_limits<std::int64_t>::max();  // held, not wrapped
  EXPECT_EQ(wrong_total_of(rows), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(wrong_total_of({}), -1);
}

}  // namespace
}  // namespace fabricbench
