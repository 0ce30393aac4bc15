// SPDX-License-Identifier: Apache-2.0
// Change points on hand-made histories: a step, a drift, a flat noisy series, a step inside the
// threshold; the table's series and buckets; too few runs.
#include "results/history.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/error.hpp"
#include "common/key_values.hpp"
#include "results/history_report.hpp"

namespace fabricbench::results {
namespace {

/// An all_reduce row at `busbw` B/s, its median known to 0.5 % (100 samples).
ResultRow row(std::uint64_t size, double busbw) {
  ResultRow r;
  r.benchmark = "fb_all_reduce";
  r.backend = "mpi";
  r.collective = "all_reduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out-of-place";
  r.size_bytes = size;
  r.ranks = 16;
  r.samples = 100;
  r.busbw_factor = 1.875;
  r.busbw_mean_bytes_per_s = r.busbw_median_bytes_per_s = busbw;
  r.algbw_mean_bytes_per_s = r.algbw_median_bytes_per_s = busbw / 1.875;
  r.time_s.mean = r.time_s.median = static_cast<double>(size) / r.algbw_median_bytes_per_s;
  r.time_s.mad = 0.005 / (1.2533 * 1.4826) * 10 * r.time_s.median;  // 0.5 % SE at n = 100
  r.time_s.stdev = 1.4826 * r.time_s.mad;
  return r;
}

/// Runs whose 32 MiB busbw follows `levels` (GB/s), one run each, start times in order.
std::vector<StoredRun> runs_at(const std::vector<double>& levels) {
  std::vector<StoredRun> runs;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    StoredRun run;
    run.path = "run" + std::to_string(i + 1) + ".json";
    run.context["start_time"] = fmt::format("2026-11-{:02}T10:00:00Z", i + 1);
    run.rows = {row(32 << 20, levels[i] * 1e9), row(4 << 10, 1e9)};
    runs.push_back(std::move(run));
  }
  return runs;
}

const HistorySeries& large(const History& h) {
  for (const HistorySeries& s : h.series)
    if (s.bucket == ">= 16 MiB") return s;
  throw std::runtime_error("no large bucket");
}

TEST(History, AStepDownIsFoundAtTheFirstRunOfTheNewLevel) {
  // 92 GB/s for three runs (+-1 %), then 81 for three: one SLOWER change starting at run 4.
  const History h = build_history(runs_at({92.3, 91.4, 92.0, 81.2, 80.7, 81.5}), HistoryOptions{});
  const HistorySeries& s = large(h);
  ASSERT_EQ(s.changes.size(), 1u);
  EXPECT_EQ(s.changes[0].run, 3u);
  EXPECT_EQ(s.changes[0].verdict, Verdict::kSlower);
  EXPECT_NEAR(s.changes[0].before, std::cbrt(92.3 * 91.4 * 92.0) * 1e9, 1e3);
  EXPECT_NEAR(s.changes[0].speedup, std::cbrt(81.2 * 80.7 * 81.5) / std::cbrt(92.3 * 91.4 * 92.0), 1e-9);
  ASSERT_TRUE(h.first_regression());
  EXPECT_EQ(*h.first_regression(), 3u);
  // The small bucket never moved.
  for (const HistorySeries& other : h.series)
    if (other.bucket == "< 64 KiB") {
      EXPECT_TRUE(other.changes.empty());
    }
}

TEST(History, ATagsLineBreakOrEscapeNeverSplitsOrRewritesTheVerdictLine) {
  std::vector<StoredRun> runs = runs_at({92.3, 91.4, 92.0, 81.2, 80.7, 81.5});
  for (std::size_t i = 3; i < runs.size(); ++i)
    for (ResultRow& r : runs[i].rows) r.tags = KeyValues::parse("driver=580\n# OK: no regression\x1b[1A");
  const History h = build_history(std::move(runs), HistoryOptions{});
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_history(out, h, HistoryOptions{});
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_EQ(printed.find("\n# OK"), std::string::npos) << printed;
  EXPECT_EQ(printed.find('\x1b'), std::string::npos);
  EXPECT_NE(printed.find("# REGRESSION: first in run 4 (2026-11-04T10:00:00Z, driver=580\\n# OK: no regression?[1A)"),
            std::string::npos)
      << printed;
}

TEST(History, ASlowDriftOverSeveralUpdatesIsARegressionToo) {
  // 2.5 % lower at every run: no step passes 5 %, but the level after run 4 is 7.5 % below the first three's.
  const History h = build_history(runs_at({100, 100.4, 99.7, 97.5, 95.0, 92.6, 90.3, 88.1}), HistoryOptions{});
  ASSERT_FALSE(large(h).changes.empty());
  EXPECT_EQ(large(h).changes.front().verdict, Verdict::kSlower);
  EXPECT_TRUE(h.first_regression());
}

TEST(History, ARunAloneAtTheStartIsNotALevelOfItsOwn) {
  // Four unchanged runs, the first 5.5 % off the next three by chance, then three at half: the
  // one change is the halving. The first run alone has no scatter to judge a level by: it borrows
  // the series' run-to-run scatter and is not called a regression of run 2.
  const History h = build_history(runs_at({96.7, 91.4, 92.0, 91.1, 46.0, 45.7, 46.2}), HistoryOptions{});
  ASSERT_EQ(large(h).changes.size(), 1u);
  EXPECT_EQ(large(h).changes[0].run, 4u);
  EXPECT_EQ(*h.first_regression(), 4u);
}

TEST(History, AShortHistoryStillShowsACollapse) {
  // Five or four runs: the level change moves most of the second differences, so they say nothing
  // of the scatter; the collapse to 1/280 is found at its first run (results/reference/vm-mpi-history).
  EXPECT_EQ(*build_history(runs_at({9.38, 8.65, 9.52, 0.0328, 0.0328}), HistoryOptions{}).first_regression(), 3u);
  EXPECT_EQ(*build_history(runs_at({8.65, 9.52, 0.0328, 0.0331, 0.0327}), HistoryOptions{}).first_regression(), 2u);
  EXPECT_EQ(*build_history(runs_at({9.38, 9.1, 0.0328, 0.0331}), HistoryOptions{}).first_regression(), 2u);
  // And five noisy runs of one level are still one level.
  EXPECT_TRUE(large(build_history(runs_at({92, 95, 90, 93, 91}), HistoryOptions{})).changes.empty());
  EXPECT_TRUE(large(build_history(runs_at({92, 95, 90, 93}), HistoryOptions{})).changes.empty());
  EXPECT_TRUE(large(build_history(runs_at({92, 95, 90}), HistoryOptions{})).changes.empty());
}

TEST(History, TwoLinksOfAMatrixWithOnePairNumberAreTwoSeries) {
  // A matrix numbers its pairs round by round: node01 - node02 and node03 - node04 are both pair 0.
  std::vector<StoredRun> runs = runs_at({92, 92, 92});
  for (StoredRun& run : runs) {
    ResultRow a = row(32 << 20, 90e9), b = row(32 << 20, 45e9);
    a.pair = b.pair = 0;
    a.host = "node01", a.peer_host = "node02";
    b.host = "node03", b.peer_host = "node04";
    run.rows = {a, b};
  }
  std::set<std::string> names;
  for (const HistorySeries& s : build_history(runs, HistoryOptions{}).series) names.insert(s.name);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_TRUE(names.count("all_reduce float sum out-of-place pair 0 node01 - node02 (16 ranks)")) << *names.begin();
}

TEST(History, AFlatNoisySeriesAndASmallStepHaveNoChange) {
  EXPECT_TRUE(large(build_history(runs_at({92, 95, 90, 93, 91, 94, 92}), HistoryOptions{})).changes.empty());
  // A clean 3 % step is real but inside the 5 % threshold.
  const History small = build_history(runs_at({92, 92.1, 91.9, 89.2, 89.3, 89.1}), HistoryOptions{});
  EXPECT_TRUE(large(small).changes.empty());
  EXPECT_FALSE(small.first_regression());
}

TEST(History, ALevelThatCameAndWentIsFoundBothWays) {
  // A driver rolled back: five runs at 92 GB/s, five at half, two back at 92. One split cuts
  // through the dip and mixes both levels on one side, so only the runs against those around them
  // show it: SLOWER at run 6, FASTER at run 11, and the history is a regression.
  const History h = build_history(runs_at({92.3, 91.4, 92.0, 92.6, 91.8, 46.1, 45.8, 46.3, 46.0, 45.9, 91.8, 92.2}),
                                  HistoryOptions{});
  const HistorySeries& s = large(h);
  ASSERT_EQ(s.changes.size(), 2u);
  EXPECT_EQ(s.changes[0].run, 5u);
  EXPECT_EQ(s.changes[0].verdict, Verdict::kSlower);
  EXPECT_EQ(s.changes[1].run, 10u);
  EXPECT_EQ(s.changes[1].verdict, Verdict::kFaster);
  EXPECT_NEAR(s.changes[0].speedup * s.changes[1].speedup, 1.0, 1e-12);
  ASSERT_TRUE(h.first_regression());
  EXPECT_EQ(*h.first_regression(), 5u);
  // Two runs down between three and three, and a better level that came and went.
  EXPECT_EQ(*build_history(runs_at({92, 91.5, 92.3, 46, 46.4, 91.7, 92.1, 91.9}), HistoryOptions{}).first_regression(),
            3u);
  const History up = build_history(runs_at({46, 46.4, 45.9, 92, 91.5, 46.1, 45.8}), HistoryOptions{});
  ASSERT_EQ(large(up).changes.size(), 2u);
  EXPECT_EQ(large(up).changes[0].verdict, Verdict::kFaster);
  EXPECT_EQ(large(up).changes[1].verdict, Verdict::kSlower);
  // One run off its neighbours is an outlier, not a level: nothing is claimed of it.
  EXPECT_TRUE(large(build_history(runs_at({92, 91.5, 92.3, 46, 91.7, 92.1, 91.9}), HistoryOptions{})).changes.empty());
}

TEST(History, ARecoveryIsFasterAndNotARegression) {
  const History h = build_history(runs_at({81, 80.5, 81.2, 92, 92.4, 91.8}), HistoryOptions{});
  ASSERT_EQ(large(h).changes.size(), 1u);
  EXPECT_EQ(large(h).changes[0].verdict, Verdict::kFaster);
  EXPECT_FALSE(h.first_regression());
}

TEST(History, RunsAreOrderedByStartTimeAndTwoRunsAreRefused) {
  std::vector<StoredRun> runs = runs_at({92, 92.2, 91.9, 81});
  std::swap(runs[0], runs[3]);
  const History h = build_history(runs, HistoryOptions{});
  EXPECT_EQ(h.runs.front().path, "run1.json");
  EXPECT_FALSE(h.notes.empty());
  EXPECT_THROW(build_history(runs_at({92, 81}), HistoryOptions{}), UsageError);
}

TEST(History, RunsWithoutAStartTimeKeepTheOrderGiven) {
  // Imported logs have none: sorted first, the slow runs 4-6 would read as a speed-up.
  std::vector<StoredRun> runs = runs_at({92, 92.2, 91.9, 46, 46.1, 45.9});
  for (std::size_t i = 3; i < runs.size(); ++i) runs[i].context.erase("start_time");
  runs[1].context["start_time"] = 20261102;  // not a time fabricbench writes
  const History h = build_history(runs, HistoryOptions{});
  EXPECT_EQ(h.runs[3].path, "run4.json");
  ASSERT_FALSE(h.notes.empty());
  EXPECT_EQ(h.notes.front(),
            "runs kept in the order given: 4 of 6 have no start time (imported logs?); give them oldest first");
  ASSERT_TRUE(h.first_regression());
  EXPECT_EQ(*h.first_regression(), 3u);
}

TEST(History, ARunThatDidNotFinishIsSaidSo) {
  std::vector<StoredRun> runs = runs_at({92, 92.2, 91.9});
  runs[2].complete = false;
  const History h = build_history(runs, HistoryOptions{});
  ASSERT_EQ(h.notes.size(), 1u);
  EXPECT_EQ(h.notes[0], "run 3 (run3.json) did not finish (\"complete\": false): its finished rows only");
}

}  // namespace
}  // namespace fabricbench::results
