// SPDX-License-Identifier: Apache-2.0
// fb_micro_mpi_allreduce_loop: the floor under fb_all_reduce --backend mpi. A plain loop of
// MPI_Allreduce (float sum, out of place) timed around kCallsPerIteration calls, the figure
// osu_allreduce and a hand-written loop give; the per-operation time is averaged over the ranks,
// as `fb_all_reduce -a avg` does. Every rank runs the same fixed iteration counts (Google
// Benchmark's own timing would let ranks disagree and deadlock); rank 0 reports.
//   mpirun -np 2 fb_micro_mpi_allreduce_loop --benchmark_out=loop.json --benchmark_out_format=json
// scripts/mpi-overhead.sh runs it interleaved with fb_all_reduce and prints the ratio per size.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "benchmark_flags.hpp"
#include "micro_common.hpp"

namespace {

constexpr int kCallsPerIteration = 2000;
constexpr int kWarmupCalls = 200;

void mpi_allreduce_loop(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const int count = static_cast<int>(bytes / sizeof(float));
  std::vector<float> in(static_cast<std::size_t>(count), 1.0F), out(static_cast<std::size_t>(count), 0.0F);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  for (int i = 0; i < kWarmupCalls; ++i)
    MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerIteration; ++i)
      MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    state.SetIterationTime(total / ranks / kCallsPerIteration);
  }
  fabricbench::micro::report_bytes(state, bytes);
}

// Ranks other than 0 run every benchmark in lockstep and print nothing.
class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

// 8 B .. 256 KiB by doubling: the sizes where per-call overhead shows.
BENCHMARK(mpi_allreduce_loop)
    ->RangeMultiplier(2)
    ->Range(8, 256 << 10)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  if (!fabricbench::micro::benchmark_flags_usable(argc, argv)) return 2;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 writes --benchmark_out: the others would write the same file at the same time.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i)
    if (rank == 0 || std::string_view(argv[i]).rfind("--benchmark_out", 0) != 0) args.push_back(argv[i]);
  int arg_count = static_cast<int>(args.size());
  benchmark::Initialize(&arg_count, args.data());
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
