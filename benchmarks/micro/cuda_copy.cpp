// SPDX-License-Identifier: Apache-2.0
// fb_micro_cuda_copy: cudaMemcpyAsync host<->GPU (pinned and pageable) and GPU<->GPU on every
// local GPU (copy/<path>/gpu<N>/<bytes>, labelled with the GPU's PCI address), timed with CUDA
// events. Healthy: PCIe Gen5 x16 about 50+ GB/s per direction pinned; H200 device-to-device about
// 4.3 TB/s counting bytes read and written (read_write_bytes_per_second). fb_health runs it for
// its per-GPU copy check.
//   fb_micro_cuda_copy --benchmark_filter='pinned/gpu[0-9]+/67108864'
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "benchmark_flags.hpp"
#include "gpu/cuda_resources.hpp"
#include "gpu_common.hpp"
#include "micro_common.hpp"

namespace {

using namespace fabricbench;

enum class Path { kHostToDevice, kDeviceToHost, kDeviceToDevice };

void copy(benchmark::State& state, Path path, bool pinned, int gpu) {
  if (micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  try {
    FB_CUDA_CHECK(cudaSetDevice(gpu));
    std::array<char, 32> address{};
    FB_CUDA_CHECK(cudaDeviceGetPCIBusId(address.data(), static_cast<int>(address.size()), gpu));
    state.SetLabel(address.data());
    cuda::DeviceBuffer device(bytes), device_peer(path == Path::kDeviceToDevice ? bytes : 0);
    cuda::PinnedHostBuffer pinned_host;
    std::vector<std::byte> pageable_host;
    void* host = nullptr;
    if (path != Path::kDeviceToDevice) {
      if (pinned) {
        pinned_host = cuda::PinnedHostBuffer(bytes);
        std::memset(pinned_host.data(), 1, bytes);
        host = pinned_host.data();
      } else {
        pageable_host.assign(bytes, std::byte{1});
        host = pageable_host.data();
      }
    }
    cuda::Stream stream = cuda::make_stream();
    cuda::Event start = cuda::make_event(), stop = cuda::make_event();
    for (auto _ : state) {
      FB_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
      switch (path) {
        case Path::kHostToDevice:
          FB_CUDA_CHECK(cudaMemcpyAsync(device.data(), host, bytes, cudaMemcpyHostToDevice, stream.get()));
          break;
        case Path::kDeviceToHost:
          FB_CUDA_CHECK(cudaMemcpyAsync(host, device.data(), bytes, cudaMemcpyDeviceToHost, stream.get()));
          break;
        case Path::kDeviceToDevice:
          FB_CUDA_CHECK(
              cudaMemcpyAsync(device_peer.data(), device.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
          break;
      }
      FB_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
      micro::wait_for(stop.get());
      state.SetIterationTime(micro::seconds_between(start.get(), stop.get()));
    }
    micro::report_bytes(state, bytes);
    if (path == Path::kDeviceToDevice)
      state.counters["read_write_bytes_per_second"] =
          benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

struct Variant {
  const char* name;
  Path path;
  bool pinned;
};
constexpr Variant kVariants[] = {{"h2d_pinned", Path::kHostToDevice, true},
                                 {"h2d_pageable", Path::kHostToDevice, false},
                                 {"d2h_pinned", Path::kDeviceToHost, true},
                                 {"d2h_pageable", Path::kDeviceToHost, false},
                                 {"d2d", Path::kDeviceToDevice, true}};

}  // namespace

int main(int argc, char** argv) {
  if (!fabricbench::micro::benchmark_flags_usable(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  // Without a GPU, GPU 0's benchmarks are still listed and skip with the reason.
  for (int gpu = 0; gpu < std::max(gpus, 1); ++gpu)
    for (const Variant& v : kVariants)
      benchmark::RegisterBenchmark(fmt::format("copy/{}/gpu{}", v.name, gpu).c_str(), copy, v.path, v.pinned, gpu)
          ->Apply(micro::message_sizes)
          ->UseManualTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
