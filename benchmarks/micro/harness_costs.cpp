// SPDX-License-Identifier: Apache-2.0
// fb_micro_harness_costs: what the harness itself costs per row (statistics, a CSV row written),
// to show it stays out of the numbers: all of it happens between timed samples, never inside.
#include <unistd.h>

#include <filesystem>
#include <random>
#include <vector>

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

void csv_row(benchmark::State& state) {
  const auto path = std::filesystem::temp_directory_path() / ("fb_micro_" + std::to_string(::getpid()) + ".csv");
  {
    auto csv = fabricbench::make_csv_reporter(path.string());
    csv->begin({});
    fabricbench::ResultRow row;
    row.benchmark = "fb_all_reduce";
    row.collective = "all_reduce";
    row.size_bytes = 1 << 20;
    for (auto _ : state) csv->add(row);
  }
  std::filesystem::remove(path.string() + ".partial");
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(summarize_samples)->Arg(20)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(csv_row)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
