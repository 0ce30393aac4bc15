// SPDX-License-Identifier: Apache-2.0
// fb_micro_cuda_copy: cudaMemcpyAsync host<->GPU (pinned and pageable) and GPU<->GPU, timed with
// CUDA events. Healthy: PCIe Gen5 x16 about 50+ GB/s per direction pinned; H200 device-to-device
// about 4.3 TB/s counting bytes read and written (read_write_bytes_per_second).
#include <cstring>
#include <vector>

#include "gpu/cuda_resources.hpp"
#include "gpu_common.hpp"
#include "micro_common.hpp"

namespace {

using namespace fabricbench;

enum class Path { kHostToDevice, kDeviceToHost, kDeviceToDevice };

void copy(benchmark::State& state, Path path, bool pinned) {
  if (micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  try {
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

}  // namespace

BENCHMARK_CAPTURE(copy, h2d_pinned, Path::kHostToDevice, true)->Apply(micro::message_sizes)->UseManualTime();
BENCHMARK_CAPTURE(copy, h2d_pageable, Path::kHostToDevice, false)->Apply(micro::message_sizes)->UseManualTime();
BENCHMARK_CAPTURE(copy, d2h_pinned, Path::kDeviceToHost, true)->Apply(micro::message_sizes)->UseManualTime();
BENCHMARK_CAPTURE(copy, d2h_pageable, Path::kDeviceToHost, false)->Apply(micro::message_sizes)->UseManualTime();
BENCHMARK_CAPTURE(copy, d2d, Path::kDeviceToDevice, true)->Apply(micro::message_sizes)->UseManualTime();
BENCHMARK_MAIN();
