// SPDX-License-Identifier: Apache-2.0
// fb_micro_host_memcpy: host memcpy bandwidth, the ceiling of every staged (non-GDR) path.
//   fb_micro_host_memcpy --benchmark_out=memcpy.json --benchmark_out_format=json
#include <cstring>
#include <vector>

#include "benchmark_flags.hpp"
#include "micro_common.hpp"

namespace {

void host_memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> source(bytes, std::byte{1});  // touched: no page faults inside the loop
  std::vector<std::byte> target(bytes, std::byte{0});
  for (auto _ : state) {
    std::memcpy(target.data(), source.data(), bytes);
    benchmark::DoNotOptimize(target.data());
    benchmark::ClobberMemory();
  }
  fabricbench::micro::report_bytes(state, bytes);
}

}  // namespace

BENCHMARK(host_memcpy)->Apply(fabricbench::micro::message_sizes);
int main(int argc, char** argv) { return fabricbench::micro::run_benchmarks(argc, argv); }
