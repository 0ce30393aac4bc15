// SPDX-License-Identifier: Apache-2.0
// The plateau gates on hand-worked curves: judged from the first size at 90 % of the peak up, per
// series (per cell of a link matrix), the slowest pair at each size for verbs; nothing measured
// is a FAIL.
#include "common/expectation.hpp"

#include <gtest/gtest.h>

namespace fabricbench {
namespace {

ResultRow row(std::uint64_t size, double busbw_gbs, std::string host = "", std::string peer = "", int pair = -1) {
  ResultRow r;
  r.collective = "all_reduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out-of-place";
  r.size_bytes = size;
  r.busbw_mean_bytes_per_s = busbw_gbs * 1e9;
  r.host = std::move(host);
  r.peer_host = std::move(peer);
  r.pair = pair;
  return r;
}

TEST(Plateau, StartsAtTheFirstSizeReachingNinetyPercentOfThePeak) {
  // Peak 100 at 4 MiB; 90 at 1 MiB is the first >= 90; the plateau is the mean of 90, 100, 95.
  const auto p = plateau_of({{4 << 20, 100.0}, {1 << 10, 1.0}, {1 << 20, 90.0}, {8 << 20, 95.0}, {1 << 16, 40.0}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->from_size, 1u << 20);
  EXPECT_EQ(p->sizes, 3u);
  EXPECT_DOUBLE_EQ(p->value, 95.0);
}

TEST(Plateau, NoneWithoutAPositiveFigure) {
  EXPECT_FALSE(plateau_of({}));
  EXPECT_FALSE(plateau_of({{8, 0.0}}));
}

TEST(ExpectedBusbw, SmallSizesDoNotFailAGoodCurve) {
  const RunVerdict v = judge_expected_busbw({row(8, 0.001), row(1 << 20, 45), row(1 << 30, 46)}, 44e9);
  EXPECT_EQ(v.word, "PASS");
}

TEST(ExpectedBusbw, APlateauBelowTheGateFailsNamingTheSeries) {
  const RunVerdict v = judge_expected_busbw({row(1 << 20, 30), row(1 << 30, 32)}, 44e9);
  EXPECT_EQ(v.word, "FAIL");
  ASSERT_EQ(v.lines.size(), 2u);
  EXPECT_EQ(v.lines[1],
            "all_reduce float sum out-of-place: 31 GB/s over 2 sizes from 1 MiB, below the expected 44 GB/s");
}

TEST(ExpectedBusbw, EachCellOfAMatrixIsItsOwnCurve) {
  // Pair 0 of two rounds: two cells, one of them slow.
  const RunVerdict v = judge_expected_busbw({row(1 << 20, 50, "n1", "n2", 0), row(1 << 20, 10, "n1", "n3", 0)}, 40e9);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_EQ(v.lines.front(), "1 of 2 curve(s) below 40 GB/s on their plateau");
  EXPECT_EQ(v.lines.back(), "n1 - n3 out-of-place: 10 GB/s at 1 MiB, below the expected 40 GB/s");
}

TEST(ExpectedBusbw, NothingMeasuredFails) { EXPECT_EQ(judge_expected_busbw({}, 1e9).word, "FAIL"); }

TEST(ExpectedGbps, TheSlowestPairAtEachSizeIsJudged) {
  // 12.5e9 B/s = 100 Gb/s, 6.25e9 B/s = 50 Gb/s: pair 1 is slow at the top size.
  const std::vector<ResultRow> rows = {row(1 << 20, 12.5, "", "", 0), row(1 << 20, 12.5, "", "", 1),
                                       row(1 << 22, 12.5, "", "", 0), row(1 << 22, 6.25, "", "", 1)};
  // Worst per size: 100 Gb/s at 1 MiB, 50 at 4 MiB. The plateau runs from 1 MiB (the first at 90 %
  // of the peak) upwards, the collapse at 4 MiB included: mean 75 Gb/s. The best pair's 100 Gb/s
  // would have passed.
  const RunVerdict v = judge_expected_gbps(rows, 90);
  EXPECT_EQ(v.word, "FAIL");
  EXPECT_EQ(v.lines.front(), "slowest pair 75.00 Gb/s over 2 sizes from 1 MiB, below the expected 90 Gb/s");
  EXPECT_EQ(judge_expected_gbps(rows, 70).word, "PASS");
  EXPECT_EQ(judge_expected_gbps({}, 1).word, "FAIL");
}

}  // namespace
}  // namespace fabricbench
