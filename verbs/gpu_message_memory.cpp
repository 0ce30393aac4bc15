// SPDX-License-Identifier: Apache-2.0
// GPU memory for the verbs benchmarks: registered directly (GPUDirect RDMA: nvidia-peermem lets
// ibv_reg_mr pin a device pointer; dma-buf hands the NIC an exported fd), or staged through a
// pinned host bounce buffer with one copy per message each way.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "gpu/cuda_resources.hpp"
#include "gpu/dmabuf.hpp"
#include "verbs/message_memory.hpp"

namespace fabricbench::verbs::detail {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t whole_pages(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

/// Behaviour shared by the kinds whose user buffer is GPU memory.
class GpuBufferMemory : public MessageMemory {
 public:
  GpuBufferMemory(int gpu, std::size_t bytes) : gpu_(gpu), device_(whole_pages(bytes)) {
    FB_CUDA_CHECK(cudaMemset(device_.data(), 0, device_.size()));
  }
  void store(std::size_t offset, const std::uint8_t* from, std::size_t bytes) override {
    FB_CUDA_CHECK(cudaMemcpy(device_.data() + offset, from, bytes, cudaMemcpyHostToDevice));
  }
  void load(std::size_t offset, std::uint8_t* to, std::size_t bytes) const override {
    FB_CUDA_CHECK(cudaMemcpy(to, device_.data() + offset, bytes, cudaMemcpyDeviceToHost));
  }
  void clear(std::size_t offset, std::size_t bytes) override {
    FB_CUDA_CHECK(cudaMemset(device_.data() + offset, 0, bytes));
  }

 protected:
  int gpu_;
  cuda::DeviceBuffer device_;
};

/// GPUDirect RDMA: the NIC reads and writes the GPU buffer itself.
class DirectGpuMemory final : public GpuBufferMemory {
 public:
  DirectGpuMemory(int gpu, std::size_t bytes, bool dmabuf) : GpuBufferMemory(gpu, bytes) {
    if (dmabuf) dmabuf_ = cuda::DmabufRange::export_range(device_.data(), device_.size());
  }
  MemoryKind kind() const override { return dmabuf_.fd() >= 0 ? MemoryKind::kCudaDmabuf : MemoryKind::kCuda; }
  std::uint8_t* wire() const override { return reinterpret_cast<std::uint8_t*>(device_.data()); }
  bool host_visible() const override { return false; }
  MemoryRegion register_with(ibv_pd* pd, int access) const override {
    const auto address = reinterpret_cast<std::uint64_t>(device_.data());
    if (dmabuf_.fd() >= 0) {
      MemoryRegion mr(ibv_reg_dmabuf_mr(pd, 0, dmabuf_.size(), address, dmabuf_.fd(), access));
      if (!mr)
        throw_errno(
            fmt::format("ibv_reg_dmabuf_mr of {} B of GPU {} memory (dma-buf fd {}): the RDMA driver must "
                        "support dma-buf (rdma-core 34+, mlx5 on kernel 5.12+); try --mem cuda",
                        dmabuf_.size(), gpu_, dmabuf_.fd()));
      return mr;
    }
    MemoryRegion mr(ibv_reg_mr(pd, device_.data(), device_.size(), access));
    if (!mr)
      throw_errno(
          fmt::format("ibv_reg_mr of {} B of GPU {} memory: is nvidia-peermem loaded? (lsmod | grep "
                      "nvidia_peermem; modprobe nvidia-peermem) - or try --mem cuda-dmabuf",
                      device_.size(), gpu_));
    return mr;
  }
  std::string describe() const override {
    return fmt::format("GPU {} ({})", gpu_, dmabuf_.fd() >= 0 ? "dma-buf" : "nvidia-peermem");
  }

 private:
  cuda::DmabufRange dmabuf_;
};

/// No GDR: the NIC sees a pinned host buffer; every message is copied between it and the GPU.
class StagedGpuMemory final : public GpuBufferMemory {
 public:
  StagedGpuMemory(int gpu, std::size_t bytes)
      : GpuBufferMemory(gpu, bytes), bounce_(device_.size()), stream_(cuda::make_stream()) {}
  MemoryKind kind() const override { return MemoryKind::kStaged; }
  std::uint8_t* wire() const override { return reinterpret_cast<std::uint8_t*>(bounce_.data()); }
  bool host_visible() const override { return true; }
  MemoryRegion register_with(ibv_pd* pd, int access) const override {
    MemoryRegion mr(ibv_reg_mr(pd, bounce_.data(), bounce_.size(), access));
    if (!mr) throw_errno(fmt::format("ibv_reg_mr of the {} B pinned bounce buffer of GPU {}", bounce_.size(), gpu_));
    return mr;
  }
  void stage_out(std::size_t offset, std::size_t bytes) override {
    copy(bounce_.data() + offset, device_.data() + offset, bytes, cudaMemcpyDeviceToHost);
  }
  void stage_in(std::size_t offset, std::size_t bytes) override {
    copy(device_.data() + offset, bounce_.data() + offset, bytes, cudaMemcpyHostToDevice);
  }
  std::string describe() const override { return fmt::format("GPU {} staged through pinned host memory", gpu_); }

 private:
  void copy(std::byte* to, const std::byte* from, std::size_t bytes, cudaMemcpyKind direction) {
    FB_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, direction, stream_.get()));
    FB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  cuda::PinnedHostBuffer bounce_;
  cuda::Stream stream_;
};

}  // namespace

std::unique_ptr<MessageMemory> make_gpu_message_memory(MemoryKind kind, int gpu, int local_rank, std::size_t bytes) {
  const std::string flag = fmt::format("--mem {}: GPU", memory_kind_name(kind));
  if (gpu < 0) {  // one GPU per local rank, as a launcher with one rank per GPU expects
    int count = 0;
    gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? local_rank % count : 0;
  }
  cuda::select_gpu(gpu, flag);
  if (kind == MemoryKind::kStaged) return std::make_unique<StagedGpuMemory>(gpu, bytes);
  return std::make_unique<DirectGpuMemory>(gpu, bytes, kind == MemoryKind::kCudaDmabuf);
}

}  // namespace fabricbench::verbs::detail
