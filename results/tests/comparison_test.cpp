// SPDX-License-Identifier: Apache-2.0
// Verdicts on hand-made result pairs: a planted 10 % drop at one size, differences inside the
// noise, a planted gain; the geometric-mean summary; context differences; series figures.
#include "results/comparison.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/summary.hpp"

namespace fabricbench::results {
namespace {

/// An all_reduce row of `size` whose samples have relative stdev `noise`, at `busbw` B/s.
ResultRow row(std::uint64_t size, double busbw, double noise = 0.01, const std::string& benchmark = "fb_all_reduce") {
  ResultRow r;
  r.benchmark = benchmark;
  r.backend = "nccl";
  r.collective = "all_reduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out-of-place";
  r.size_bytes = size;
  r.ranks = 8;
  r.samples = 20;
  r.busbw_factor = 1.75;
  r.busbw_mean_bytes_per_s = busbw;
  r.algbw_mean_bytes_per_s = busbw / 1.75;
  r.time_s.mean = static_cast<double>(size) / r.algbw_mean_bytes_per_s;
  r.time_s.stdev = noise * r.time_s.mean;
  r.tags = KeyValues::parse("run=before");
  return r;
}

StoredRun run_of(std::vector<ResultRow> rows, const std::string& name) {
  StoredRun run;
  run.path = name;
  run.rows = std::move(rows);
  return run;
}

std::vector<ResultRow> sweep(double scale_at_1m = 1.0, double noise = 0.01, const std::string& tag = "run=before") {
  std::vector<ResultRow> rows;
  for (std::uint64_t size = 1024; size <= (64u << 20); size *= 4) {
    const double busbw = 100e9 * static_cast<double>(size) / static_cast<double>(size + (1u << 20));
    ResultRow r = row(size, size == (1u << 20) ? busbw * scale_at_1m : busbw, noise);
    r.tags = KeyValues::parse(tag);
    rows.push_back(r);
  }
  return rows;
}

TEST(Decide, TheIntervalAgainstTheThreshold) {
  EXPECT_EQ(decide(1.00, 0.98, 1.02, 0.05), Verdict::kSame);    // tight, no change
  EXPECT_EQ(decide(0.97, 0.96, 0.98, 0.05), Verdict::kSame);    // a real 3 % change is inside the threshold
  EXPECT_EQ(decide(0.97, 0.90, 1.04, 0.05), Verdict::kUnsure);  // straddles -5 %
  EXPECT_EQ(decide(0.90, 0.86, 0.94, 0.05), Verdict::kSlower);
  EXPECT_EQ(decide(0.90, 0.70, 1.15, 0.05), Verdict::kUnsure);  // a large drop inside a huge spread
  EXPECT_EQ(decide(1.10, 1.06, 1.14, 0.05), Verdict::kFaster);
  EXPECT_EQ(decide(0.90, 0.90, 0.90, 0.05), Verdict::kSlower);  // uncertainty unknown: the point is the interval
}

TEST(Decide, AChangeContentionAloneCouldExplainIsUnsure) {
  // 30 % slower, known to +-5 %: the new run's ranks could have lost 40 % to other work: UNSURE.
  EXPECT_EQ(decide(0.70, 0.65, 0.75, 0.05, {0, 0.4}), Verdict::kUnsure);
  EXPECT_EQ(decide(0.70, 0.65, 0.75, 0.05, {0, 0.1}), Verdict::kSlower);  // beyond what 10 % explains
  EXPECT_EQ(decide(0.70, 0.65, 0.75, 0.05, {0.4, 0}), Verdict::kSlower);  // the baseline's own cannot
  // A contended baseline reads slow, so a new run reads fast: 1 / (1 - 0.4) = 1.67 covers +30 %.
  EXPECT_EQ(decide(1.30, 1.25, 1.35, 0.05, {0.4, 0}), Verdict::kUnsure);
  EXPECT_EQ(decide(1.30, 1.25, 1.35, 0.05, {0.1, 0}), Verdict::kFaster);
  EXPECT_EQ(decide(1.00, 0.98, 1.02, 0.05, {0.5, 0.5}), Verdict::kSame);  // agreeing runs agree
}

TEST(Decide, NormalQuantiles) {
  EXPECT_NEAR(two_sided_z(0.05), 1.959964, 1e-5);
  EXPECT_NEAR(two_sided_z(0.05 / 10), 2.807034, 1e-5);  // Bonferroni over 10 rows
}

/// A one-row comparison with hand-set statistics: median time `median`, MAD `mad`, n samples.
ResultRow timed(double median, double mad, std::uint64_t samples) {
  ResultRow r = row(1 << 20, 1e9);
  r.samples = samples;
  r.time_s.median = median;
  r.time_s.mean = median;
  r.time_s.mad = mad;
  r.time_s.stdev = 1.4826 * mad;
  r.busbw_median_bytes_per_s = 1.75 * static_cast<double>(1 << 20) / median;
  r.busbw_mean_bytes_per_s = r.busbw_median_bytes_per_s;
  return r;
}

CompareOptions within_run_only() {
  CompareOptions o;
  o.within_run_only = true;
  return o;
}

TEST(Model, FourStandardErrorsBeyondTheThresholdIsSlower) {
  // Each median: SE = 1.2533 x 1.4826 x MAD / median / sqrt(n) = 1.858 x 0.0538 / 10 = 1 %, so the
  // combined SE of the change is 1.414 %. One row: z = 1.96. A 10.6 % drop (5 % + 4 combined
  // SEs) has its interval at 0.894 x e^(+-1.96 x 0.01414) = 0.870..0.919: wholly below 0.95.
  const double mad = 0.01 / (1.2533 * 1.4826) * 10;  // 1 % SE at n = 100, median 1
  const StoredRun base = run_of({timed(1.0, mad, 100)}, "base");
  const StoredRun fresh = run_of({timed(1 / 0.894, mad / 0.894, 100)}, "new");
  const Comparison c = compare_runs(base, fresh, within_run_only());
  const RowComparison& r = c.rows.front();
  EXPECT_EQ(r.statistic, "median");
  EXPECT_EQ(r.uncertainty, Uncertainty::kWithinRun);
  EXPECT_NEAR(r.standard_error, 0.01 * std::sqrt(2), 1e-6);
  EXPECT_NEAR(r.speedup, 0.894, 1e-9);
  EXPECT_NEAR(r.low, 0.894 * std::exp(-1.959964 * 0.01 * std::sqrt(2)), 1e-5);
  EXPECT_EQ(r.verdict, Verdict::kSlower);
}

TEST(Model, ALargeShiftInsideAHugeSpreadIsUnsure) {
  const double mad = 0.2 / (1.2533 * 1.4826) * std::sqrt(20.0);  // 20 % SE at n = 20
  const Comparison c = compare_runs(run_of({timed(1.0, mad, 20)}, "base"),
                                    run_of({timed(1 / 0.8, mad / 0.8, 20)}, "new"), CompareOptions{});
  EXPECT_NEAR(c.rows.front().speedup, 0.8, 1e-9);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kUnsure);
}

TEST(Model, ATightZeroChangeIsSame) {
  const double mad = 0.001 / (1.2533 * 1.4826) * 10;  // 0.1 % SE at n = 100
  const Comparison c =
      compare_runs(run_of({timed(1.0, mad, 100)}, "base"), run_of({timed(1.0, mad, 100)}, "new"), CompareOptions{});
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSame);
}

TEST(Model, APlantedFifteenPercentDropOnTwoHundredNoisySamplesIsSlower) {
  // The newcomer's case, as the CI machine measures it: 200 samples whose median spreads 2.5 %
  // (1.4826 MAD / median) while a few preempted samples push the stdev to 32 %. One run a side,
  // so each median is given 1.5 x its samples' spread run to run: SE = sqrt(2) x 3.75 % = 5.3 %;
  // one row: z = 1.96; 0.85 x e^(+-1.96 x 0.053) = 0.77..0.94: wholly below 0.95.
  ResultRow a = timed(1.0, 0.025 / 1.4826, 200), b = timed(1 / 0.85, 0.025 / 1.4826 / 0.85, 200);
  a.time_s.stdev = 0.32;
  b.time_s.stdev = 0.32 / 0.85;
  const Comparison c = compare_runs(run_of({a}, "base"), run_of({b}, "new"), CompareOptions{});
  EXPECT_EQ(c.rows.front().statistic, "median");
  EXPECT_EQ(c.rows.front().uncertainty, Uncertainty::kAssumedBetweenRun);
  EXPECT_NEAR(c.rows.front().standard_error, 1.5 * 0.025 * std::sqrt(2), 1e-9);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  // On its samples alone (--within-run-only) the SE is the median's: 10 x smaller.
  EXPECT_LT(compare_runs(run_of({a}, "base"), run_of({b}, "new"), within_run_only()).rows.front().standard_error,
            0.005);
}

TEST(Model, OneRunASideIsGivenItsSamplesSpreadRunToRunAtLeastOnePercent) {
  // The A/A case of a busy machine: two unchanged runs whose medians moved 6 %, each median's
  // samples spreading 4 %. On the samples alone (0.4 % SEs) that is SLOWER; with each median
  // given 1.5 x 4 % run to run (SE 8.5 %) it is UNSURE, not a regression.
  const ResultRow a = timed(1.0, 0.04 / 1.4826, 100), b = timed(1.06, 0.04 / 1.4826 * 1.06, 100);
  EXPECT_EQ(compare_runs(run_of({a}, "b"), run_of({b}, "n"), within_run_only()).rows.front().verdict, Verdict::kSlower);
  const RowComparison r = compare_runs(run_of({a}, "b"), run_of({b}, "n"), CompareOptions{}).rows.front();
  EXPECT_NEAR(r.standard_error, 1.5 * 0.04 * std::sqrt(2), 1e-9);
  EXPECT_EQ(r.verdict, Verdict::kUnsure);
  // Samples that agree to 0.1 % still move 1 % run to run: the floor.
  const ResultRow steady = timed(1.0, 0.001 / 1.4826, 100);
  EXPECT_NEAR(compare_runs(run_of({steady}, "b"), run_of({steady}, "n"), CompareOptions{}).rows.front().standard_error,
              kMinimumRunSpread * std::sqrt(2), 1e-9);
}

TEST(Model, TheBaselinesRunToRunSpreadWidensTheInterval) {
  // Within-run alone, an 8 % drop with 0.5 % SEs is SLOWER; a baseline of 3 runs whose medians
  // spread 6 % run to run makes it UNSURE: SE = sqrt(0.06^2 / 3 + 0.06^2) = 6.9 %.
  const double mad = 0.005 / (1.2533 * 1.4826) * 10;
  ResultRow base = timed(1.0, mad, 100);
  const ResultRow fresh = timed(1 / 0.92, mad / 0.92, 100);
  EXPECT_EQ(compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), within_run_only()).rows.front().verdict,
            Verdict::kSlower);
  base.runs = 3;
  base.between_run_rsd = 0.06;
  const RowComparison r = compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), CompareOptions{}).rows.front();
  EXPECT_EQ(r.uncertainty, Uncertainty::kBetweenRun);
  EXPECT_NEAR(r.standard_error, std::sqrt(0.06 * 0.06 / 3 + 0.06 * 0.06), 1e-9);
  EXPECT_EQ(r.verdict, Verdict::kUnsure);
}

TEST(Model, RowsOfOneSampleARunAreJudgedByTheirRunsSpread) {
  // nccl-tests' window (--timer host) keeps one sample a run: no spread of its own. One run a side
  // stays of unknown uncertainty (as an nccl-tests log); three runs a side at 2 % spread judge a
  // 20 % drop SLOWER on that spread, and no change SAME.
  ResultRow base = timed(1.0, 0, 1), fresh = timed(1 / 0.8, 0, 1);
  EXPECT_EQ(compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), CompareOptions{}).rows.front().uncertainty,
            Uncertainty::kUnknown);
  base.runs = fresh.runs = 3;
  base.between_run_rsd = fresh.between_run_rsd = 0.02;
  const RowComparison r = compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), CompareOptions{}).rows.front();
  EXPECT_EQ(r.uncertainty, Uncertainty::kBetweenRun);
  EXPECT_NEAR(r.standard_error, 0.02 * std::sqrt(2.0 / 3), 1e-12);
  EXPECT_EQ(r.verdict, Verdict::kSlower);
  EXPECT_EQ(compare_runs(run_of({base}, "b"), run_of({base}, "n"), CompareOptions{}).rows.front().verdict,
            Verdict::kSame);
  // A baseline of three runs against one new run: the baseline's spread judges both sides (the new
  // run is one draw of it). At a 10 % spread a 10 % drop is within reach of chance: UNSURE, where
  // the point alone (unknown uncertainty) would have said SLOWER.
  const ResultRow single = timed(1 / 0.9, 0, 1);
  base.between_run_rsd = 0.10;
  const RowComparison wide = compare_runs(run_of({base}, "b"), run_of({single}, "n"), CompareOptions{}).rows.front();
  EXPECT_EQ(wide.uncertainty, Uncertainty::kBetweenRun);
  EXPECT_NEAR(wide.standard_error, std::sqrt(0.1 * 0.1 / 3 + 0.1 * 0.1), 1e-12);
  EXPECT_EQ(wide.verdict, Verdict::kUnsure);
}

TEST(Decide, StudentQuantilesForFewRuns) {
  // Tables: t(0.975; 2) = 4.303, t(0.975; 10) = 2.228, t(0.995; 4) = 4.604; large df -> z.
  EXPECT_NEAR(two_sided_t(0.05, 2), 4.302653, 1e-5);
  EXPECT_NEAR(two_sided_t(0.05, 10), 2.228139, 1e-5);
  EXPECT_NEAR(two_sided_t(0.01, 4), 4.604095, 1e-5);
  EXPECT_NEAR(two_sided_t(0.05, 1e6), two_sided_z(0.05), 1e-4);
}

TEST(Model, RepeatsOnBothSidesPoolTheirSpreadAndUseStudentsT) {
  // Baseline 3 runs at 4 % spread, new run 3 runs at 3 %: pooled s = sqrt((2 x 0.04^2 + 2 x 0.03^2) / 4)
  // = 3.54 % on 4 degrees of freedom; SE = s x sqrt(1/3 + 1/3) = 2.89 %; one row: t(0.975; 4) = 2.776.
  // A 20 % drop: 0.8 x e^(+-2.776 x 0.0289) = 0.739..0.866, wholly below 0.95: SLOWER.
  const double mad = 0.002 / (1.2533 * 1.4826) * 10;  // 0.2 % within-run SE at n = 100
  ResultRow base = timed(1.0, mad, 100), fresh = timed(1 / 0.8, mad / 0.8, 100);
  base.runs = fresh.runs = 3;
  base.between_run_rsd = 0.04;
  fresh.between_run_rsd = 0.03;
  const Comparison c = compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), CompareOptions{});
  const RowComparison& r = c.rows.front();
  const double s = std::sqrt((2 * 0.04 * 0.04 + 2 * 0.03 * 0.03) / 4);
  EXPECT_NEAR(c.pooled_spread, s, 1e-12);
  EXPECT_EQ(c.spread_degrees_of_freedom, 4);
  EXPECT_NEAR(c.t, 2.776445, 1e-5);
  EXPECT_NEAR(r.standard_error, s * std::sqrt(2.0 / 3), 1e-12);
  EXPECT_NEAR(r.low, 0.8 * std::exp(-2.776445 * s * std::sqrt(2.0 / 3)), 1e-6);
  EXPECT_EQ(r.verdict, Verdict::kSlower);
  // The same 20 % drop where the runs spread 15 %: interval 0.8 x e^(+-2.776 x 0.1225) = 0.57..1.12: UNSURE.
  base.between_run_rsd = fresh.between_run_rsd = 0.15;
  EXPECT_EQ(compare_runs(run_of({base}, "b"), run_of({fresh}, "n"), CompareOptions{}).rows.front().verdict,
            Verdict::kUnsure);
}

TEST(Model, ARowWhoseFewRunsHappenedToAgreeGetsTheRunsTypicalSpread) {
  // Two rows: one whose 3 runs spread 10 %, one whose 3 runs agreed to 0.1 %. The typical spread
  // (the median over the rows): (10 % + 0.1 %) / 2 = 5.05 %, the floor of the second row's.
  const double mad = 0.002 / (1.2533 * 1.4826) * 10;
  ResultRow noisy = timed(1.0, mad, 100), lucky = timed(2.0, 2 * mad, 100);
  lucky.size_bytes = 4 << 20;
  noisy.runs = lucky.runs = 3;
  noisy.between_run_rsd = 0.1;
  lucky.between_run_rsd = 0.001;
  const Comparison c = compare_runs(run_of({noisy, lucky}, "b"), run_of({noisy, lucky}, "n"), CompareOptions{});
  const double floor = (0.1 + 0.001) / 2;
  EXPECT_NEAR(c.pooled_spread, floor, 1e-12);
  EXPECT_NEAR(c.rows[1].standard_error, floor * std::sqrt(2.0 / 3), 1e-12);  // 3 runs on each side
}

TEST(Model, SmallSizesSpreadDoesNotSetALargerRowsFloor) {
  // The fake cluster under load: 64 and 256 KiB scatter 50 and 40 % from run to run, 1 and 4 MiB
  // 5 and 4 %; 3 runs a side. 4 MiB's floor is the median over itself and the next smaller sizes
  // until two rows: {4 %, 5 %} -> 4.5 %; 1 MiB's {4 %, 5 %}; 64 KiB's every row's, (5 % + 40 %) / 2.
  const double mad = 0.002 / (1.2533 * 1.4826) * 10;
  std::vector<ResultRow> base, fresh;
  for (const auto& [size, spread] : {std::pair{64 << 10, 0.5}, {256 << 10, 0.4}, {1 << 20, 0.05}, {4 << 20, 0.04}}) {
    ResultRow r = timed(1.0, mad, 100);
    r.size_bytes = static_cast<std::uint64_t>(size);
    r.runs = 3;
    r.between_run_rsd = spread;
    base.push_back(r);
    fresh.push_back(r);
  }
  // A 40 % drop at 4 MiB: SE = 4.5 % x sqrt(2/3) = 3.7 %, t(0.05/4 two-sided; 4) = 4.85: 0.6 x
  // e^(+-0.178) = 0.50..0.72, SLOWER. Under the floor of every row (22.5 %) it was 0.24..1.48.
  fresh[3].time_s.median = fresh[3].time_s.mean = 1 / 0.6;
  fresh[3].busbw_median_bytes_per_s *= 0.6;
  fresh[3].busbw_mean_bytes_per_s *= 0.6;
  const Comparison c = compare_runs(run_of(base, "b"), run_of(fresh, "n"), CompareOptions{});
  EXPECT_NEAR(c.rows[3].spread_floor, 0.045, 1e-12);
  EXPECT_NEAR(c.rows[2].spread_floor, 0.045, 1e-12);
  EXPECT_NEAR(c.rows[0].spread_floor, (0.05 + 0.4) / 2, 1e-12);
  EXPECT_NEAR(c.pooled_spread, (0.05 + 0.4) / 2, 1e-12);  // the typical spread over every row, as reported
  EXPECT_NEAR(c.rows[3].standard_error, 0.045 * std::sqrt(2.0 / 3), 1e-12);
  EXPECT_EQ(c.rows[3].verdict, Verdict::kSlower);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kUnsure);  // no change within a 50 % spread: not SAME either
}

TEST(Model, ImportsWithoutSamplesHaveNoStatedUncertainty) {
  ResultRow a = row(1 << 20, 1e9), b = a;
  a.samples = b.samples = 0;  // an nccl-tests line: one average
  b.busbw_mean_bytes_per_s *= 0.8;
  b.time_s.mean /= 0.8;
  const RowComparison r = compare_runs(run_of({a}, "b"), run_of({b}, "n"), CompareOptions{}).rows.front();
  EXPECT_EQ(r.uncertainty, Uncertainty::kUnknown);
  EXPECT_EQ(r.verdict, Verdict::kSlower);  // beyond the threshold, said with its uncertainty unknown
}

TEST(Baseline, CombinedRunsKeepTheCentreAndTheRunToRunSpread) {
  // Medians 1.0, 1.1, 0.9 s: centre 1.0, stdev 0.1 (n - 1), so between_run_rsd 0.1.
  std::vector<StoredRun> runs;
  for (double median : {1.0, 1.1, 0.9}) runs.push_back(run_of({timed(median, 0.01, 50)}, "r"));
  const std::vector<ResultRow> rows = combine_runs(runs, CompareOptions{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs, 3u);
  EXPECT_NEAR(rows[0].time_s.median, 1.0, 1e-12);
  EXPECT_NEAR(rows[0].between_run_rsd, 0.1, 1e-12);
  EXPECT_EQ(rows[0].samples, 50u);
}

TEST(Baseline, CombinedRatesAreTheRatesAtTheCombinedTimes) {
  // Two runs of 1 and 3 s: the centre time is 2 s, so the centre rate is the size's rate at 2 s,
  // not the mean of the two rates (which the 1 s run would lead to 1.33x it).
  std::vector<StoredRun> runs;
  for (double median : {1.0, 3.0}) runs.push_back(run_of({timed(median, 0.01, 50)}, "r"));
  const std::vector<ResultRow> rows = combine_runs(runs, CompareOptions{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].time_s.median, 2.0, 1e-12);
  EXPECT_NEAR(rows[0].busbw_median_bytes_per_s, 1.75 * static_cast<double>(1 << 20) / 2.0, 1e-6);
  EXPECT_NEAR(rows[0].busbw_mean_bytes_per_s, 1.75 * static_cast<double>(1 << 20) / 2.0, 1e-6);
  // Against one run of 2 s: no change, where a mean of rates would read -25 %.
  const Comparison c = compare_runs(run_of(rows, "base"), run_of({timed(2.0, 0.01, 50)}, "new"), CompareOptions{});
  EXPECT_NEAR(c.rows.front().speedup, 1.0, 1e-12);
}

TEST(Baseline, ARunWithoutAFigureOrWithWrongDataIsNotAveragedAway) {
  // A failed benchmark (no figure) in one run: the centre has none, and fails closed where judged.
  std::vector<StoredRun> runs;
  ResultRow failed = timed(1.0, 0.01, 50), wrong = timed(1.0, 0.01, 50), unchecked = timed(1.0, 0.01, 50);
  failed.time_s = Summary{};
  failed.busbw_median_bytes_per_s = failed.busbw_mean_bytes_per_s = 0;
  for (const ResultRow& r : {timed(1.0, 0.01, 50), failed}) runs.push_back(run_of({r}, "r"));
  const std::vector<ResultRow> centre = combine_runs(runs, CompareOptions{});
  EXPECT_EQ(centre[0].time_s.mean, 0);
  EXPECT_EQ(centre[0].busbw_median_bytes_per_s, 0);
  // Wrong data in one run and another not checked: the wrong elements stay.
  wrong.wrong = 3;
  unchecked.wrong = -1;
  const std::vector<ResultRow> mixed = combine_runs({run_of({wrong}, "w"), run_of({unchecked}, "u")}, CompareOptions{});
  EXPECT_EQ(mixed[0].wrong, 3);
}

TEST(Compare, PlantedTenPercentDropAtOneSizeIsTheOnlySlowerRow) {
  const StoredRun base = run_of(sweep(), "base"), fresh = run_of(sweep(0.90, 0.01, "run=after"), "new");
  const Comparison c = compare_runs(base, fresh, CompareOptions{});
  ASSERT_EQ(c.rows.size(), base.rows.size());  // tags differ: ignored by default
  EXPECT_EQ(c.count(Verdict::kSlower), 1u);
  // The unchanged rows: one run a side with samples spreading 1 % gives each median 1.5 % run to
  // run, intervals of +-5.9 % at 9 rows: wider than the threshold, so UNSURE, never accused.
  EXPECT_EQ(c.count(Verdict::kUnsure), base.rows.size() - 1);
  EXPECT_TRUE(c.regression());
  const RowComparison& worst = c.rows[c.worst.front()];
  EXPECT_EQ(worst.base.size_bytes, 1u << 20);
  EXPECT_EQ(worst.verdict, Verdict::kSlower);
  EXPECT_NEAR(worst.speedup, 0.90, 1e-12);
  // One run a side: each mean given 1.5 x its samples' 1 % spread run to run.
  EXPECT_NEAR(worst.standard_error, std::sqrt(2) * 0.015, 1e-12);
  // Geometric mean over 1 MiB and up: 1 MiB, 4, 16, 64 MiB, one of them at 0.9.
  EXPECT_EQ(c.geomean_rows, 4u);
  EXPECT_NEAR(c.geomean_speedup, std::pow(0.9, 0.25), 1e-12);
}

TEST(Compare, DifferencesInsideTheNoiseAreNotRegressions) {
  // 30 % relative stdev on 20 samples: 6.7 % SE per run, and 9 rows widen the interval to 2.77 SEs.
  const StoredRun base = run_of(sweep(1.0, 0.3), "base"), fresh = run_of(sweep(0.88, 0.3), "new");
  const Comparison c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_EQ(c.rows[5].verdict, Verdict::kUnsure);  // the 12 % drop at 1 MiB
  EXPECT_FALSE(c.regression());
  const Comparison small = compare_runs(base, run_of(sweep(0.97, 0.01), "new"), CompareOptions{});
  EXPECT_FALSE(small.regression());
  const Comparison tight =
      compare_runs(run_of(sweep(1.0, 0.01), "b"), run_of(sweep(0.97, 0.01), "n"), within_run_only());
  EXPECT_EQ(tight.count(Verdict::kSame), base.rows.size());  // 3 % inside 5 %, intervals of +-0.9 %
}

TEST(Compare, PlantedGainIsFaster) {
  const Comparison c = compare_runs(run_of(sweep(), "base"), run_of(sweep(1.25), "new"), CompareOptions{});
  EXPECT_EQ(c.count(Verdict::kFaster), 1u);
  EXPECT_FALSE(c.regression());
}

TEST(Compare, LatencyRowsAreJudgedOnTimeLowerIsBetter) {
  ResultRow a = row(2, 1e6, 0.01, "fb_rdma_write_lat"), b = a;
  b.time_s.mean = a.time_s.mean * 1.2;  // 20 % more latency
  b.time_s.stdev = 0.01 * b.time_s.mean;
  const Comparison c = compare_runs(run_of({a}, "base"), run_of({b}, "new"), CompareOptions{});
  EXPECT_EQ(c.rows[0].metric, Metric::kTime);
  EXPECT_NEAR(c.rows[0].speedup, 1 / 1.2, 1e-12);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSlower);
}

TEST(Compare, MatchesOnWhatWasMeasuredAndReportsTheRest) {
  std::vector<ResultRow> fresh = sweep();
  fresh.back().ranks = 16;  // not the same measurement
  fresh.front().settings = KeyValues::parse("algo=Ring");
  const Comparison c = compare_runs(run_of(sweep(), "base"), run_of(fresh, "new"), CompareOptions{});
  EXPECT_EQ(c.rows.size(), sweep().size() - 2);
  EXPECT_EQ(c.only_base.size(), 2u);
  EXPECT_EQ(c.only_new.size(), 2u);
  CompareOptions ignore;
  ignore.ignore_settings = true;
  EXPECT_EQ(compare_runs(run_of(sweep(), "base"), run_of(fresh, "new"), ignore).rows.size(), sweep().size() - 1);
  CompareOptions tags;
  tags.match_tags = true;
  EXPECT_THROW(compare_runs(run_of(sweep(), "base"), run_of(sweep(1, 0.01, "run=after"), "new"), tags), InputError);
}

TEST(Compare, ContextDifferencesAreNamed) {
  const nlohmann::json a = {
      {"ranks", 8},
      {"hosts", {{"node01", 4}, {"node02", 4}}},
      {"rank_context", {{{"nccl_library_version", 22703}, {"gpus", {{{"gpu_name", "NVIDIA H100"}}}}}}}};
  nlohmann::json b = a;
  b["rank_context"][0]["nccl_library_version"] = 22809;
  b["hosts"] = {{"node01", 4}, {"node03", 4}};
  const auto differences = context_differences(a, b);
  ASSERT_EQ(differences.size(), 2u);
  EXPECT_EQ(differences[0].item, "hosts");
  EXPECT_EQ(differences[0].fresh, "node01,node03");
  EXPECT_EQ(differences[1].item, "nccl version");
  EXPECT_EQ(differences[1].base, "22703");
}

TEST(SeriesFigures, HandWorkedCurve) {
  // busbw 10, 50, 80, 95, 100, 98 GB/s at 1..32 KiB: 50 % at 2 KiB, 90 % at 8 KiB, plateau the
  // mean of 95, 100, 98.
  std::vector<ResultRow> rows;
  const double busbw[] = {10, 50, 80, 95, 100, 98};
  for (int i = 0; i < 6; ++i) rows.push_back(row(1024u << i, busbw[i] * 1e9));
  const SeriesFigures f = series_figures(rows);
  EXPECT_DOUBLE_EQ(f.peak_busbw, 100e9);
  EXPECT_EQ(f.peak_size, 16384u);
  EXPECT_EQ(f.size_at_half_peak, 2048u);
  EXPECT_EQ(f.size_at_90_percent_peak, 8192u);
  EXPECT_DOUBLE_EQ(f.plateau_busbw, (95e9 + 100e9 + 98e9) / 3);
  EXPECT_EQ(f.small_message_size, 1024u);
  EXPECT_DOUBLE_EQ(f.small_message_time_s, rows[0].time_s.mean);
}

TEST(Model, RunsKeepTheirContentionAndTheComparisonAllowsForIt) {
  // As a run's JSON summary keeps it (common/cpu_contention.cpp writes it).
  const CpuContention contended = contention_from_json(
      nlohmann::json::parse(R"({"runqueue_wait":0.5,"runqueue_wait_rank":1,"steal":0.0,"slowdown":4.0})"));
  EXPECT_TRUE(contended.known);
  EXPECT_EQ(contended.runqueue_wait_rank, 1);
  EXPECT_DOUBLE_EQ(contended.slowdown, 4.0);
  StoredRun base = run_of({timed(1.0, 0.001, 100)}, "base");
  StoredRun fresh = run_of({timed(1.5, 0.0015, 100)}, "new");  // 33 % slower, tightly known
  EXPECT_EQ(compare_runs(base, fresh, CompareOptions{}).rows.front().verdict, Verdict::kSlower);
  fresh.contention = contended;  // its ranks could not run half the time: up to 4x
  Comparison c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_DOUBLE_EQ(c.contention.fresh, 0.75);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kUnsure);
  base.contention = contended;  // contended alike (oversubscribed the same way): the change is real
  base.contention.slowdown = 3.0;
  c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_NEAR(c.contention.fresh, 0.25, 1e-12);  // only the new run's excess, 4x over 3x
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  // Nonsense in a file is not believed: NaN or a wait above 1 is unknown, a slowdown below 1 the wait's own bound.
  EXPECT_FALSE(contention_from_json(nlohmann::json{{"runqueue_wait", 1.5}, {"steal", 0.0}}).known);
  EXPECT_FALSE(contention_from_json(nlohmann::json{{"runqueue_wait", NAN}, {"steal", 0.0}}).known);
  EXPECT_DOUBLE_EQ(
      contention_from_json(nlohmann::json{{"runqueue_wait", 0.5}, {"steal", 0.0}, {"slowdown", 0.5}}).slowdown, 2.0);
}

TEST(Model, ARowMeasuredDuringABurstIsAllowedItsOwnContention) {
  // The fast test tier beside two ranks: the run's bound said 1.6x, the 4 MiB rows' own 5.0x
  // (measured 2026-12-05, rows of one run bounded 1.0-9.2x). A row 3x slower whose own samples
  // waited that much more than the baseline's is UNSURE, though the runs alone allow only 6 %.
  StoredRun base = run_of({timed(1.0, 0.001, 100)}, "base");
  StoredRun fresh = run_of({timed(3.0, 0.003, 100)}, "new");
  base.contention.known = fresh.contention.known = true;
  base.contention.slowdown = 1.5;
  fresh.contention.slowdown = 1.6;
  Comparison c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);  // schema 8: no row of its own
  EXPECT_FALSE(c.rows.front().own_contention);
  base.rows.front().contention_slowdown = 1.2;
  fresh.rows.front().contention_slowdown = 5.0;
  c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_TRUE(c.rows.front().own_contention);
  EXPECT_NEAR(c.rows.front().contention.fresh, 1 - 1.2 / 5.0, 1e-12);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kUnsure);
  EXPECT_EQ(c.rows_with_own_contention(), 1u);
  // Rows contended alike (ranks oversubscribed every time) allow no more than the runs: the change is real.
  fresh.rows.front().contention_slowdown = 1.25;
  c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_NEAR(c.rows.front().contention.fresh, 1 - 1.5 / 1.6, 1e-12);  // the runs' floor
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  // It is read back from the files: a column of its own since schema 9.
  nlohmann::json row = row_to_json(fresh.rows.front());
  EXPECT_DOUBLE_EQ(row_from_json(row, kSchemaVersion, "row").contention_slowdown, 1.25);
  EXPECT_DOUBLE_EQ(row_from_json(row, 8, "row").contention_slowdown, 0);  // older files never had it
}

TEST(Model, ASlowerCoreHandoffExplainsASlowerRunOnlyAsFarAsItMoved) {
  // The 2-core VM's vCPUs placed in one L3 domain, then in two: ranks 0 and 1's 256 KiB handoff
  // went from 5.3 to 14.7 us (measured 2026-12-05) and MPI's shared-memory all_reduce by 1.7-2.1x.
  const auto with_handoff = [](double before_ns, double after_ns) {
    return contention_from_json(nlohmann::json{
        {"runqueue_wait", 0.0}, {"steal", 0.0}, {"core_handoff_ns", nlohmann::json::array({before_ns, after_ns})}});
  };
  EXPECT_DOUBLE_EQ(with_handoff(5341, 5400).handoff_after_ns, 5400);
  const auto on = [](const char* memory, ResultRow row) {
    row.memory = memory;
    return row;
  };
  StoredRun base = run_of({on("host", timed(1.0, 0.001, 100))}, "base");
  StoredRun fresh = run_of({on("host", timed(1.8, 0.0018, 100))}, "new");  // 44 % less busbw, tightly known
  base.contention = with_handoff(5341, 5400);
  fresh.contention = with_handoff(14698, 14100);
  Comparison c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_NEAR(c.contention.handoff_fresh, 1 - 5341.0 / 14100, 1e-12);  // up to 62 % explained
  EXPECT_EQ(c.rows.front().verdict, Verdict::kUnsure);
  // The same placement (the handoff moved 2 %): the drop is the fabric's. So is it where only one
  // of the new run's handoffs was slow (a moment's contention at its start).
  for (const auto& [before, after] : {std::pair{5450.0, 5300.0}, std::pair{3'990'000.0, 5300.0}}) {
    fresh.contention = with_handoff(before, after);
    c = compare_runs(base, fresh, CompareOptions{});
    EXPECT_DOUBLE_EQ(c.contention.fresh, 0);
    EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  }
  // A drop beyond what the handoff explains is still SLOWER: 4x slower against a 2.8x handoff; a
  // handoff 100x slower (scheduling, not placement) explains no more than 65 %.
  fresh = run_of({on("host", timed(4.0, 0.004, 100))}, "new");
  fresh.contention = with_handoff(14698, 14100);
  EXPECT_EQ(compare_runs(base, fresh, CompareOptions{}).rows.front().verdict, Verdict::kSlower);
  fresh.contention = with_handoff(534'100, 540'000);
  c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_DOUBLE_EQ(c.contention.fresh, kMaxHandoffAllowance);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  // Data a GPU moved (NCCL's rows: cuda memory): the cores' handoff explains nothing of it.
  StoredRun gpu_base = run_of({on("cuda", timed(1.0, 0.001, 100))}, "base");
  StoredRun gpu_fresh = run_of({on("cuda", timed(1.8, 0.0018, 100))}, "new");
  gpu_base.contention = with_handoff(5341, 5400);
  gpu_fresh.contention = with_handoff(14698, 14100);
  c = compare_runs(gpu_base, gpu_fresh, CompareOptions{});
  EXPECT_DOUBLE_EQ(c.contention.fresh, 0);
  EXPECT_EQ(c.rows.front().verdict, Verdict::kSlower);
  // Only a pair of finite, positive figures is believed; one side without it: nothing explained.
  EXPECT_DOUBLE_EQ(with_handoff(NAN, 5000).handoff_before_ns, 0);
  EXPECT_DOUBLE_EQ(with_handoff(-1, 5000).handoff_before_ns, 0);
  fresh.contention = with_handoff(14698, 14100);
  base.contention = CpuContention{};
  EXPECT_DOUBLE_EQ(compare_runs(base, fresh, CompareOptions{}).contention.fresh, 0);
}

TEST(Compare, ARunHoldingOneRowTwiceIsRefusedNotMatchedByItsFirst) {
  std::vector<ResultRow> twice = sweep();
  twice.push_back(twice.front());
  try {
    compare_runs(run_of(sweep(), "base.csv"), run_of(twice, "new.csv"), CompareOptions{});
    FAIL() << "a duplicated row was taken";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "new.csv: the row all_reduce float sum out-of-place of 1024 B is there twice: which one to "
                 "compare is not known");
  }
  EXPECT_THROW(compare_runs(run_of(twice, "base.csv"), run_of(sweep(), "new.csv"), CompareOptions{}), InputError);
  // Rows of two settings are one row once the settings are ignored.
  std::vector<ResultRow> settings = sweep();
  for (ResultRow r : sweep()) {
    r.settings = KeyValues::parse("NCCL_ALGO=Ring");
    settings.push_back(r);
  }
  EXPECT_NO_THROW(compare_runs(run_of(settings, "base.csv"), run_of(settings, "new.csv"), CompareOptions{}));
  CompareOptions ignoring;
  ignoring.ignore_settings = true;
  EXPECT_THROW(compare_runs(run_of(settings, "base.csv"), run_of(settings, "new.csv"), ignoring), InputError);
}

TEST(Compare, RunsWhoseSharedRowsHaveNoFigureSaySoNotThatTheyShareNone) {
  // A Google Benchmark file where every benchmark failed, compared with itself.
  std::vector<ResultRow> failed = sweep();
  for (ResultRow& r : failed) r.time_s = Summary{}, r.busbw_mean_bytes_per_s = r.algbw_mean_bytes_per_s = 0;
  try {
    compare_runs(run_of(failed, "bm.json"), run_of(failed, "bm.json"), CompareOptions{});
    FAIL() << "rows without a figure were judged";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "bm.json and bm.json share 9 row(s) and none has a figure on both sides (a benchmark that failed, a "
                 "refused setting, or nan or 0 in the file): nothing to judge");
  }
}

}  // namespace
}  // namespace fabricbench::results
