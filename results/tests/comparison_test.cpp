// SPDX-License-Identifier: Apache-2.0
// Verdicts on hand-made result pairs: a planted 10 % drop at one size, differences inside the
// noise, a planted gain; the geometric-mean summary; context differences; series figures.
#include <gtest/gtest.h>

#include <cmath>

#include "common/summary.hpp"
#include "results/comparison.hpp"

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

TEST(Decide, ThresholdThenNoiseThenDirection) {
  EXPECT_EQ(decide(1.04, 0.0, 0.05, 2), Verdict::kSame);
  EXPECT_EQ(decide(0.96, 0.5, 0.05, 2), Verdict::kSame);    // inside the threshold, whatever the noise
  EXPECT_EQ(decide(0.90, 0.06, 0.05, 2), Verdict::kUnsure);  // 10 % change, 2 x 6 % noise
  EXPECT_EQ(decide(0.90, 0.02, 0.05, 2), Verdict::kSlower);
  EXPECT_EQ(decide(1.10, 0.02, 0.05, 2), Verdict::kFaster);
}

TEST(Compare, PlantedTenPercentDropAtOneSizeIsTheOnlySlowerRow) {
  const StoredRun base = run_of(sweep(), "base"), fresh = run_of(sweep(0.90, 0.01, "run=after"), "new");
  const Comparison c = compare_runs(base, fresh, CompareOptions{});
  ASSERT_EQ(c.rows.size(), base.rows.size());  // tags differ: ignored by default
  EXPECT_EQ(c.count(Verdict::kSlower), 1u);
  EXPECT_EQ(c.count(Verdict::kSame), base.rows.size() - 1);
  EXPECT_TRUE(c.regression());
  const RowComparison& worst = c.rows[c.worst.front()];
  EXPECT_EQ(worst.base.size_bytes, 1u << 20);
  EXPECT_EQ(worst.verdict, Verdict::kSlower);
  EXPECT_NEAR(worst.speedup, 0.90, 1e-12);
  EXPECT_NEAR(worst.noise, std::sqrt(2) * 0.01, 1e-12);
  // Geometric mean over 1 MiB and up: 1 MiB, 4, 16, 64 MiB, one of them at 0.9.
  EXPECT_EQ(c.geomean_rows, 4u);
  EXPECT_NEAR(c.geomean_speedup, std::pow(0.9, 0.25), 1e-12);
}

TEST(Compare, DifferencesInsideTheNoiseAreNotRegressions) {
  const StoredRun base = run_of(sweep(1.0, 0.08), "base"), fresh = run_of(sweep(0.88, 0.08), "new");
  const Comparison c = compare_runs(base, fresh, CompareOptions{});
  EXPECT_EQ(c.count(Verdict::kUnsure), 1u);  // 12 % inside 2 x 11.3 % combined noise
  EXPECT_FALSE(c.regression());
  const Comparison small = compare_runs(base, run_of(sweep(0.97, 0.08), "new"), CompareOptions{});
  EXPECT_EQ(small.count(Verdict::kSame), base.rows.size());
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
  fresh.back().ranks = 16;      // not the same measurement
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
  const nlohmann::json a = {{"ranks", 8},
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

}  // namespace
}  // namespace fabricbench::results
