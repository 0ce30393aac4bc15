// SPDX-License-Identifier: Apache-2.0
// fb_micro_host_register: cudaHostRegister cost against size (what pinning a staging buffer costs;
// NCCL and MPI libraries pay it for every new user buffer they pin).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "benchmark_flags.hpp"
#include "gpu_common.hpp"
#include "micro_common.hpp"

namespace {

struct Free {
  void operator()(void* p) const noexcept { std::free(p); }
};

void host_register(benchmark::State& state) {
  if (fabricbench::micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<void, Free> memory(std::aligned_alloc(4096, bytes));
  std::memset(memory.get(), 1, bytes);
  try {
    for (auto _ : state) {
      const auto start = std::chrono::steady_clock::now();
      FB_CUDA_CHECK(cudaHostRegister(memory.get(), bytes, cudaHostRegisterDefault));
      state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      FB_CUDA_CHECK(cudaHostUnregister(memory.get()));
    }
    fabricbench::micro::report_bytes(state, bytes);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK(host_register)->Apply(fabricbench::micro::message_sizes)->UseManualTime();
int main(int argc, char** argv) { return fabricbench::micro::run_benchmarks(argc, argv); }
