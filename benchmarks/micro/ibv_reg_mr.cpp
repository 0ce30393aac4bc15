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
#include <string>

#include "micro_common.hpp"
#include "verbs/resources.hpp"

#if FABRICBENCH_HAVE_CUDA
#include "gpu/cuda_resources.hpp"
#include "gpu/dmabuf.hpp"
#include "gpu_common.hpp"
#endif

namespace {

using fabricbench::verbs::Context;
using fabricbench::verbs::DeviceList;
using fabricbench::verbs::MemoryRegion;
using fabricbench::verbs::ProtectionDomain;

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

// The device and protection domain, opened once for all benchmarks; `error` says why not.
struct Hca {
  Context context;
  ProtectionDomain pd;
  std::string error;
};

std::string g_device_name;  // --dev

Hca& hca() {
  static Hca hca = [] {
    Hca h;
    int count = 0;
    DeviceList list(ibv_get_device_list(&count));
    if (!list || count == 0) {
      h.error = "no RDMA device (ibv_get_device_list found none): run it in the Soft-RoCE VM or on a node with an HCA";
      return h;
    }
    ibv_device* chosen = nullptr;
    std::string names;
    for (int i = 0; i < count; ++i) {
      const std::string name = ibv_get_device_name(list.get()[i]);
      names += (names.empty() ? "" : ", ") + name;
      if (g_device_name.empty() ? i == 0 : name == g_device_name) chosen = list.get()[i];
    }
    if (!chosen) {
      h.error = "no RDMA device named " + g_device_name + "; present: " + names;
      return h;
    }
    h.context.reset(ibv_open_device(chosen));
    if (!h.context) {
      h.error = std::string("ibv_open_device failed: ") + std::strerror(errno);
      return h;
    }
    h.pd.reset(ibv_alloc_pd(h.context.get()));
    if (!h.pd) h.error = std::string("ibv_alloc_pd failed: ") + std::strerror(errno);
    return h;
  }();
  return hca;
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

void reg_host(benchmark::State& state) {
  if (!hca().error.empty()) return state.SkipWithError(hca().error.c_str());
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<void, Free> memory(std::aligned_alloc(4096, bytes));
  std::memset(memory.get(), 1, bytes);
  time_registrations(state, bytes, [&] { return ibv_reg_mr(hca().pd.get(), memory.get(), bytes, kAccess); });
}

#if FABRICBENCH_HAVE_CUDA
void reg_gpu_peermem(benchmark::State& state) {
  if (!hca().error.empty()) return state.SkipWithError(hca().error.c_str());
  if (fabricbench::micro::skip_without_gpu(state)) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  fabricbench::cuda::DeviceBuffer buffer(bytes);
  time_registrations(state, bytes, [&] {
    ibv_mr* mr = ibv_reg_mr(hca().pd.get(), buffer.data(), bytes, kAccess);
    if (!mr) errno = errno ? errno : EFAULT;  // EFAULT/EINVAL here usually means nvidia-peermem is not loaded
    return mr;
  });
}

void reg_gpu_dmabuf(benchmark::State& state) {
  if (!hca().error.empty()) return state.SkipWithError(hca().error.c_str());
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
    return ibv_reg_dmabuf_mr(hca().pd.get(), 0, bytes, reinterpret_cast<std::uint64_t>(buffer.data()), range.fd(),
                             kAccess);
  });
}
#endif

}  // namespace

BENCHMARK(reg_host)->Apply(fabricbench::micro::message_sizes)->UseManualTime();
#if FABRICBENCH_HAVE_CUDA
BENCHMARK(reg_gpu_peermem)->Apply(fabricbench::micro::message_sizes)->UseManualTime();
BENCHMARK(reg_gpu_dmabuf)->Apply(fabricbench::micro::message_sizes)->UseManualTime();
#endif

int main(int argc, char** argv) {
  // --dev NAME is ours; the rest is Google Benchmark's.
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--dev") == 0) {
      g_device_name = argv[i + 1];
      for (int j = i; j + 2 < argc + 1; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
