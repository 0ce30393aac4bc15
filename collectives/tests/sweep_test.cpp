// SPDX-License-Identifier: Apache-2.0
// The sweep and sampling loop on real MPI ranks (mpirun -np 2) with a scripted backend in place
// of a communication library: each call "takes" a time the test chose, so the rows' times, rates,
// slowest rank, batch and wrong counts can be asserted exactly. The library is what is faked
// here, not MPI; the real backends are proven by the mpi_* and gpu_* tests.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/catalog.hpp"
#include "collectives/run_plan.hpp"
#include "collectives/runner.hpp"
#include "common/mpi.hpp"
#include "common/watchdog.hpp"

namespace fabricbench::collectives {
namespace {

/// Seconds per call: 1 ms per rank-1 call, 0.5 ms on rank 0, plus 1 ns per element. One wrong
/// element on rank 1 at the 64-element count.
class ScriptedBackend final : public Backend {
 public:
  explicit ScriptedBackend(int rank, int ranks) : rank_(rank), ranks_(ranks) {}
  std::string_view name() const override { return "scripted"; }
  int ranks() const override { return ranks_; }
  std::string dtype_unsupported(DataType) const override { return {}; }
  std::string op_unsupported(ReduceOp) const override { return {}; }
  std::uint64_t max_count() const override { return 1 << 20; }
  bool has_form(const Collective&, CallForm form) const override { return form == CallForm::kLibrary; }
  std::string call_name(const Collective&, CallForm) const override { return "scripted_call"; }
  CacheMode cache_mode() const override { return CacheMode::kWarm; }
  void reserve(std::uint64_t, std::uint64_t) override {}
  void prepare(const CallSpec&) override { ++prepared; }
  double run(const CallSpec& call, int operations) override {
    calls += operations;
    return operations * seconds_per_call(call.count, rank_);
  }
  std::uint64_t count_wrong(const CallSpec& call) override { return rank_ == 1 && call.count == 64 ? 1 : 0; }
  bool corrupt_output(const CallSpec&) override { return false; }

  static double seconds_per_call(std::uint64_t count, int rank) {
    return (rank == 1 ? 1e-3 : 0.5e-3) + static_cast<double>(count) * 1e-9;
  }
  int prepared = 0;
  long calls = 0;

 private:
  int rank_, ranks_;
};

class RowCollector final : public Reporter {
 public:
  void begin(const RunHeader&) override {}
  void add(const ResultRow& row) override { rows.push_back(row); }
  void finish(const RunTotals&) override {}
  std::vector<ResultRow> rows;
};

TEST(Sweep, RowsCarryTheRankReducedTimesRatesAndWrongCountsOfEveryPoint) {
  mpi::MpiPlane world;
  const Topology topology = discover_topology(world);
  ASSERT_EQ(topology.size, 2) << "run under mpirun -np 2";
  CollectiveOptions options;
  options.sweep.min_bytes = 64;  // float: counts 16, 64, 256
  options.sweep.max_bytes = 1024;
  options.sweep.factor = 4;
  options.iterations = 7;
  options.warmup_iterations = 3;
  ScriptedBackend backend(topology.rank, topology.size);
  const RunPlan plan = make_run_plan(kAllReduce, options, backend);
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_EQ(plan.planned_rows(), 6u);

  RowCollector collector;
  Watchdog watchdog(60, topology.label());
  const SweepResult result = run_sweep("fb_test", plan, backend, RankGroup{world, {}}, topology,
                                       topology.rank == 0 ? &collector : nullptr, watchdog);

  ASSERT_EQ(result.rows.size(), 6u);
  EXPECT_EQ(result.wrong_total, 2);  // the 64-element count, out-of-place and in-place
  for (const ResultRow& row : result.rows) {
    // The slowest rank's time (rank reduction max): rank 1's 1 ms + 1 ns per element.
    const double expected = ScriptedBackend::seconds_per_call(row.count, 1);
    EXPECT_DOUBLE_EQ(row.time_s.mean, expected) << row.count;
    EXPECT_DOUBLE_EQ(row.time_s.min, expected);
    EXPECT_EQ(row.samples, 7u);
    EXPECT_EQ(row.batch, 1u);  // a 1 ms call is far above the clock's resolution
    EXPECT_EQ(row.slowest_rank, 1);
    EXPECT_EQ(row.wrong, row.count == 64 ? 1 : 0);
    // all_reduce: algbw = bytes / time, busbw = algbw x 2(n-1)/n = algbw for 2 ranks.
    EXPECT_DOUBLE_EQ(row.algbw_mean_bytes_per_s, static_cast<double>(row.count * 4) / expected);
    EXPECT_DOUBLE_EQ(row.busbw_mean_bytes_per_s, row.algbw_mean_bytes_per_s);
    EXPECT_EQ(row.size_bytes, row.count * 4);
  }
  EXPECT_EQ(result.rows[0].placement, "out-of-place");
  EXPECT_EQ(result.rows[1].placement, "in-place");
  // Warm-up, batch sizing (a batch of one is confirmed by a second probe) and samples, then the
  // check call: per row 3 + 2 + 7 + 1 calls.
  EXPECT_EQ(backend.calls, 6 * (3 + 2 + 7 + 1));
  if (topology.rank == 0) {
    EXPECT_EQ(collector.rows.size(), 6u);
  }
}

TEST(Sweep, AnNcclSettingOnABackendWithoutTuningIsAUsageErrorOfThePlan) {
  CollectiveOptions options;
  options.algorithms = {"Ring"};
  ScriptedBackend backend(0, 2);
  EXPECT_THROW(make_run_plan(kAllReduce, options, backend), UsageError);
}

}  // namespace
}  // namespace fabricbench::collectives

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  fabricbench::mpi::Session session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) ::testing::GTEST_FLAG(output) = "";  // one report, from rank 0
  return RUN_ALL_TESTS();
}
