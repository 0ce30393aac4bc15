// SPDX-License-Identifier: Apache-2.0
#include "common/quiet_repeats.hpp"

#include <gtest/gtest.h>

namespace fabricbench {
namespace {

// Each sweep's contention bound, folded over the ranks.
std::vector<CpuContention> sweeps(const std::vector<double>& bounds) {
  std::vector<CpuContention> out;
  for (double bound : bounds) {
    CpuContention c;
    c.slowdown = bound;
    c.known = true;
    out.push_back(c);
  }
  return out;
}

// The 3-host fake cluster with the fast test tier beside it: a burst struck one sweep (bound 10
// against 5); the round measures until three sweeps agree, and leaves the burst's out.
TEST(QuietRepeats, ABurstOnOneSweepAsksForAnotherAndIsLeftOut) {
  EXPECT_TRUE(contention_wants_more(sweeps({5, 10, 5.2}), 3, 4.5));
  EXPECT_FALSE(contention_wants_more(sweeps({5, 10, 5.2, 4.9}), 3, 4.5));
  EXPECT_EQ(quiet_sweeps(sweeps({5, 10, 5.2, 4.9}), 3), (std::vector<std::size_t>{0, 2, 3}));
  // Load that stays after one quiet sweep: the third quietest (10) sets the line, 1.25x it.
  EXPECT_TRUE(contention_wants_more(sweeps({5, 10, 9, 11, 10, 14}), 3, 4.5));
  EXPECT_EQ(quiet_sweeps(sweeps({5, 10, 9, 11, 10, 14}), 3), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

TEST(QuietRepeats, SteadyLoadOrUnknownContentionKeepsEverySweep) {
  // The build beside every sweep alike (bounds 15.4-17.6 on the fake cluster, whose own layout
  // explains 3.4): they agree, and no sweep is left out; but the load may still end, so another
  // sweep is measured (up to --repeat-max), as long as the quietest three read beyond the layout.
  EXPECT_TRUE(contention_wants_more(sweeps({15.4, 17.6, 16.2}), 3, 3.375));
  EXPECT_FALSE(contention_wants_more(sweeps({3.5, 3.6, 4.0, 16.2}), 3, 3.375));
  EXPECT_TRUE(contention_wants_more(sweeps({3.5, 3.6, 4.4, 16.2}), 3, 3.375));
  EXPECT_EQ(quiet_sweeps(sweeps({15.4, 17.6, 16.2, 15.0}), 3), (std::vector<std::size_t>{0, 1, 2, 3}));
  // Eight ranks waiting 1.5-3 %: bounds of exactly 1 (waits under 2 % count as none) or 1.27 by
  // chance are one state, not a burst to leave out.
  EXPECT_FALSE(contention_wants_more(sweeps({1.0, 1.27, 1.0}), 3, 1));
  EXPECT_EQ(quiet_sweeps(sweeps({1.0, 1.27, 1.0, 1.5}), 3), (std::vector<std::size_t>{0, 1, 2, 3}));
  // Not known for one sweep (no /proc): nothing to hold the others against; kept as measured.
  std::vector<CpuContention> unknown = sweeps({5, 10, 5, 4});
  unknown[1].known = false;
  EXPECT_FALSE(contention_wants_more(unknown, 3, 1));
  EXPECT_EQ(quiet_sweeps(unknown, 3), (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(QuietRepeats, ContentionBeyondTheLayoutIsJudgedAgainstTheRanksSharingOfCores) {
  // Two ranks with a core each read 1.0-1.27 when quiet; 1.6 is a neighbour's.
  EXPECT_FALSE(beyond_layout(1.27, 1));
  EXPECT_TRUE(beyond_layout(1.6, 1));
  // Three ranks on two cores read 3.4-3.6 with nothing beside them.
  EXPECT_FALSE(beyond_layout(3.6, 3.375));
  EXPECT_TRUE(beyond_layout(12.7, 3.375));
}

// One step's rows of each sweep, by their median times.
std::vector<std::vector<ResultRow>> rows_of(const std::vector<std::vector<double>>& medians_of_sweep) {
  std::vector<std::vector<ResultRow>> out;
  for (const std::vector<double>& medians : medians_of_sweep) {
    std::vector<ResultRow> rows(medians.size());
    for (std::size_t j = 0; j < medians.size(); ++j) rows[j].time_s.median = medians[j];
    out.push_back(rows);
  }
  return out;
}

std::vector<const std::vector<ResultRow>*> pointers(const std::vector<std::vector<ResultRow>>& sweeps) {
  std::vector<const std::vector<ResultRow>*> out;
  for (const std::vector<ResultRow>& rows : sweeps) out.push_back(&rows);
  return out;
}

TEST(QuietRepeats, ARowWhoseSweepsScatterAsksForMore) {
  // 1 % apart: the centre of three is known to 0.6 %.
  const auto tight = rows_of({{1.0, 2.0}, {1.01, 2.02}, {0.99, 1.98}});
  EXPECT_FALSE(spread_wants_more(pointers(tight)));
  // The second row 16 % apart (the fake cluster's 256 KiB under load): 9 % / sqrt 3 > 2.5 %.
  const auto wide = rows_of({{1.0, 2.0}, {1.01, 2.4}, {0.99, 1.8}});
  EXPECT_TRUE(spread_wants_more(pointers(wide)));
  EXPECT_FALSE(spread_wants_more(pointers(rows_of({{1.0, 2.0}}))));  // one sweep: no spread yet
}

TEST(QuietRepeats, TheTitleSaysHowManySweeps) {
  EXPECT_EQ(repeats_title(RepeatPlan(1)), "");
  EXPECT_EQ(repeats_title(RepeatPlan(3)), ", 3 sweeps combined per row (centre and run-to-run spread)");
  EXPECT_EQ(repeats_title(RepeatPlan(3, 9)),
            ", 3 to 9 sweeps combined per row (centre and run-to-run spread; more where CPU contention or the "
            "spread asks, contended ones left out)");
}

}  // namespace
}  // namespace fabricbench
