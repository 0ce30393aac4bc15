// SPDX-License-Identifier: Apache-2.0
// fb_micro_harness_costs: what the harness itself costs per row (statistics, a CSV row written),
// to show it stays out of the numbers: all of it happens between timed samples, never inside.
#include <unistd.h>

#include <filesystem>
#include <random>
#include <vector>

#include "benchmark_flags.hpp"
#include "common/reporter.hpp"
#include "common/stats.hpp"
#include "micro_common.hpp"

namespace {

void summarize_samples(benchmark::State& state) {
  std::mt19937 generator(42);
  std::lognormal_distribution<double> jitter(-11.0, 0.3);  // ~20 us samples with a tail
  std::vector<double> samples(static_cast<std::size_t>(state.range(0)));
  for (double& s : samples) s = jitter(generator);
  for (auto _ : state) benchmark::DoNotOptimize(fabricbench::summarize(samples));
  state.SetItemsProcessed(state.iterations());
}

fabricbench::ResultRow typical_row() {
  fabricbench::ResultRow row;
  row.benchmark = "fb_all_reduce";
  row.backend = "nccl";
  row.collective = row.operation = "all_reduce";
  row.dtype = "float";
  row.op = "sum";
  row.placement = "out-of-place";
  row.size_bytes = 1 << 20;
  row.settings = fabricbench::KeyValues({{"algo", "Ring"}, {"proto", "LL128"}});
  return row;
}

// One row written by a reporter, the file growing: a sweep of state.range(0) rows, then the end.
void reporter_rows(benchmark::State& state, const char* extension,
                   std::unique_ptr<fabricbench::Reporter> (*make)(const std::string&)) {
  const auto path = std::filesystem::temp_directory_path() / ("fb_micro_" + std::to_string(::getpid()) + extension);
  const fabricbench::ResultRow row = typical_row();
  for (auto _ : state) {
    auto reporter = make(path.string());
    reporter->begin({});
    for (std::int64_t i = 0; i < state.range(0); ++i) reporter->add(row);
    reporter->finish({});
  }
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void csv_rows(benchmark::State& state) { reporter_rows(state, ".csv", fabricbench::make_csv_reporter); }
void json_rows(benchmark::State& state) { reporter_rows(state, ".json", fabricbench::make_json_reporter); }

}  // namespace

BENCHMARK(summarize_samples)->Arg(20)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);
// Per row: items_per_second. The JSON .partial stays a valid document after every row; its cost
// must not grow with the rows (100000 rows: an --algo all --proto all -d all -o all NCCL sweep).
BENCHMARK(csv_rows)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(json_rows)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);
int main(int argc, char** argv) { return fabricbench::micro::run_benchmarks(argc, argv); }
