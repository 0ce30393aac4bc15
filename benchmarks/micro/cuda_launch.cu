// SPDX-License-Identifier: Apache-2.0
// fb_micro_cuda_launch: what launching a kernel and using CUDA events cost, the floor under every
// small-message GPU timing.
#include "benchmark_flags.hpp"
#include "gpu/cuda_resources.hpp"
#include "gpu_common.hpp"

namespace {

using namespace fabricbench;

__global__ void empty_kernel() {}

// Host time of one asynchronous launch (the queue is drained every 256 launches, outside timing).
void kernel_launch(benchmark::State& state) {
  if (micro::skip_without_gpu(state)) return;
  try {
    cuda::Stream stream = cuda::make_stream();
    cuda::Event done = cuda::make_event();
    std::int64_t launched = 0;
    for (auto _ : state) {
      empty_kernel<<<1, 1, 0, stream.get()>>>();
      if (++launched % 256 == 0) {
        state.PauseTiming();
        FB_CUDA_CHECK(cudaEventRecord(done.get(), stream.get()));
        micro::wait_for(done.get());
        state.ResumeTiming();
      }
    }
    FB_CUDA_CHECK(cudaGetLastError());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Launch, record an event, poll it: the round trip a blocking benchmark pays per call.
void launch_and_wait(benchmark::State& state) {
  if (micro::skip_without_gpu(state)) return;
  try {
    cuda::Stream stream = cuda::make_stream();
    cuda::Event done = cuda::make_event();
    for (auto _ : state) {
      empty_kernel<<<1, 1, 0, stream.get()>>>();
      FB_CUDA_CHECK(cudaEventRecord(done.get(), stream.get()));
      micro::wait_for(done.get());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// GPU time between two events recorded back to back: the resolution floor of event timing.
void event_pair(benchmark::State& state) {
  if (micro::skip_without_gpu(state)) return;
  try {
    cuda::Stream stream = cuda::make_stream();
    cuda::Event start = cuda::make_event(), stop = cuda::make_event();
    double gpu_seconds = 0;
    for (auto _ : state) {
      FB_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      FB_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
      micro::wait_for(stop.get());
      gpu_seconds += micro::seconds_between(start.get(), stop.get());
    }
    state.counters["gpu_time_between_events_us"] = 1e6 * gpu_seconds / static_cast<double>(state.iterations());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK(kernel_launch)->Unit(benchmark::kMicrosecond);
BENCHMARK(launch_and_wait)->Unit(benchmark::kMicrosecond);
BENCHMARK(event_pair)->Unit(benchmark::kMicrosecond);
int main(int argc, char** argv) { return fabricbench::micro::run_benchmarks(argc, argv); }
