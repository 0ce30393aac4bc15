// SPDX-License-Identifier: Apache-2.0
// fb_micro_ibv_reg_mr: memory-registration cost against size: ibv_reg_mr on host memory, on GPU
// memory through nvidia-peermem, and ibv_reg_dmabuf_mr on a GPU buffer exported as dma-buf.
// Registration is what an RDMA library pays for every new buffer: pathologically slow numbers
// (IOMMU, hugepages off) show here before they show as fabric slowness.
//   fb_micro_ibv_reg_mr --dev rxe0 (the first device when not given)
#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "benchmark_flags.hpp"
#include "micro_common.hpp"
#include "verbs/device.hpp"
#include "verbs/resources.hpp"

#if FABRICBENCH_HAVE_CUDA
#include "gpu/cuda_resources.hpp"
#include "gpu/dmabuf.hpp"
#include "gpu_common.hpp"
#endif

namespace {

using fabricbench::verbs::MemoryRegion;

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

// The device, opened once in main() through the verbs library, or why it could not be.
struct OpenedHca {
  std::optional<fabricbench::verbs::Hca> hca;
  std::string error;
  ibv_pd* pd() const { return hca->pd.get(); }
};

OpenedHca open_device(const std::string& name) {
  OpenedHca opened;
  try {
    opened.hca.emplace(fabricbench::verbs::open_hca(name, 1, -1));
  } catch (const std::exception& e) {
    opened.error = e.what();
  }
  return opened;
}

struct Free {
  void operator()(void* p) const noexcept { std::free(p); }
};

// Times `reg` (returns the MR) per iteration; deregistration happens outside the timing.
template <class Register>
void time_registrations(benchmark::State& state, std::size_t bytes, Register&& reg) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    MemoryRegion mr(reg());
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!mr) {
      state.SkipWithError((std::string("registration failed: ") + std::strerror(errno)).c_str());
      return;
    }
  }
  fabricbench::micro::report_bytes(state, bytes);
}

void reg_host(benchmark::State& state, const OpenedHca& hca) {
  if (!hca.error.empty()) return state.SkipWithError(hca.error.c_str());
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<void, Free> memory(std::aligned_alloc(4096, bytes));
  std::memset(memory.get(), 1, bytes);
  time_registrations(state, bytes, [&] { return ibv_reg_mr(hca.pd(), memory.get(), bytes, kAccess); });
}

#if FABRICBENCH_HAVE_CUDA
void reg_gpu_peermem(benchmark::State& state, const OpenedHca& hca) {
  if (!hca.error.empty()) return state.SkipWithError(hca.error.c_str());
  if (fabricbench::micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  fabricbench::cuda::DeviceBuffer buffer(bytes);
  time_registrations(state, bytes, [&] {
    ibv_mr* mr = ibv_reg_mr(hca.pd(), buffer.data(), bytes, kAccess);
    if (!mr) errno = errno ? errno : EFAULT;  // EFAULT/EINVAL here usually means nvidia-peermem is not loaded
    return mr;
  });
}

void reg_gpu_dmabuf(benchmark::State& state, const OpenedHca& hca) {
  if (!hca.error.empty()) return state.SkipWithError(hca.error.c_str());
  if (fabricbench::micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  fabricbench::cuda::DeviceBuffer buffer(bytes);
  fabricbench::cuda::DmabufRange range;
  try {
    range = fabricbench::cuda::DmabufRange::export_range(buffer.data(), bytes);
  } catch (const std::exception& e) {
    return state.SkipWithError(e.what());
  }
  time_registrations(state, bytes, [&] {
    return ibv_reg_dmabuf_mr(hca.pd(), 0, bytes, reinterpret_cast<std::uint64_t>(buffer.data()), range.fd(), kAccess);
  });
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // --dev NAME is ours; the rest is Google Benchmark's.
  std::string device_name;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--dev") == 0) {
      device_name = argv[i + 1];
      for (int j = i; j + 2 < argc + 1; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  if (!fabricbench::micro::benchmark_flags_usable(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const OpenedHca hca = open_device(device_name);
  auto add = [&hca](const char* name, void (*body)(benchmark::State&, const OpenedHca&)) {
    benchmark::RegisterBenchmark(name, [body, &hca](benchmark::State& state) { body(state, hca); })
        ->Apply(fabricbench::micro::message_sizes)
        ->UseManualTime();
  };
  add("reg_host", reg_host);
#if FABRICBENCH_HAVE_CUDA
  add("reg_gpu_peermem", reg_gpu_peermem);
  add("reg_gpu_dmabuf", reg_gpu_dmabuf);
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
