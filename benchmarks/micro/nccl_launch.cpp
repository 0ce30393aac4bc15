// SPDX-License-Identifier: Apache-2.0
// fb_micro_nccl_launch: a one-rank NCCL all_reduce's launch cost and round trip, the per-call
// overhead under every multi-rank small-message number.
#include <nccl.h>

#include "benchmark_flags.hpp"
#include "collectives/nccl/nccl_check.hpp"
#include "gpu/cuda_resources.hpp"
#include "gpu_common.hpp"
#include "micro_common.hpp"

namespace {

using namespace fabricbench;

struct DestroyComm {
  void operator()(ncclComm* c) const noexcept { ncclCommDestroy(c); }
};
using Comm = std::unique_ptr<ncclComm, DestroyComm>;

void all_reduce(benchmark::State& state, bool wait_each) {
  if (micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  try {
    int device = 0;
    ncclComm_t raw = nullptr;
    FB_NCCL_CHECK(ncclCommInitAll(&raw, 1, &device));
    Comm comm(raw);
    cuda::DeviceBuffer buffer(bytes);
    cuda::Stream stream = cuda::make_stream();
    cuda::Event done = cuda::make_event();
    std::int64_t launched = 0;
    for (auto _ : state) {
      FB_NCCL_CHECK(
          ncclAllReduce(buffer.data(), buffer.data(), bytes / 4, ncclFloat32, ncclSum, comm.get(), stream.get()));
      if (wait_each || ++launched % 256 == 0) {
        if (!wait_each) state.PauseTiming();
        FB_CUDA_CHECK(cudaEventRecord(done.get(), stream.get()));
        micro::wait_for(done.get());
        if (!wait_each) state.ResumeTiming();
      }
    }
    FB_CUDA_CHECK(cudaEventRecord(done.get(), stream.get()));
    micro::wait_for(done.get());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK_CAPTURE(all_reduce, enqueue_only, false)->Arg(8)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(all_reduce, round_trip, true)->Arg(8)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
int main(int argc, char** argv) { return fabricbench::micro::run_benchmarks(argc, argv); }
