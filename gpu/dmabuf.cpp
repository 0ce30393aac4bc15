// SPDX-License-Identifier: Apache-2.0
#include "gpu/dmabuf.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "common/error.hpp"

namespace fabricbench::cuda {
namespace {

constexpr std::size_t kPage = 4096;

using GetHandleForAddressRange = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);

// Reached through the runtime rather than linked from libcuda, so the programs start (and say
// what is missing) on machines without a driver.
GetHandleForAddressRange driver_entry_point() {
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &symbol, 11070, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !symbol)
    throw Error(
        "the CUDA driver has no cuMemGetHandleForAddressRange: dma-buf export needs driver 515 or newer; use "
        "--mem cuda (nvidia-peermem) instead");
  return reinterpret_cast<GetHandleForAddressRange>(symbol);
}

}  // namespace

DmabufRange::DmabufRange(DmabufRange&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0)) {}

DmabufRange& DmabufRange::operator=(DmabufRange&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DmabufRange::~DmabufRange() {
  if (fd_ >= 0) ::close(fd_);
}

DmabufRange DmabufRange::export_range(const void* device_pointer, std::size_t bytes) {
  const auto address = reinterpret_cast<CUdeviceptr>(device_pointer);
  if (address % kPage != 0)
    throw Error(fmt::format("dma-buf export of {:#x}: the range must start on a {} B page", address, kPage));
  DmabufRange range;
  range.size_ = (bytes + kPage - 1) / kPage * kPage;
  const CUresult rc = driver_entry_point()(&range.fd_, address, range.size_, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (rc != CUDA_SUCCESS) {
    range.fd_ = -1;
    throw Error(fmt::format(
        "cuMemGetHandleForAddressRange of {} B at {:#x} failed (CUresult {}): this GPU, driver or kernel cannot "
        "export dma-buf (needs Linux 5.12+ and, on some GPUs, NVIDIA's open kernel modules); use --mem cuda "
        "(nvidia-peermem) instead",
        range.size_, address, static_cast<int>(rc)));
  }
  return range;
}

}  // namespace fabricbench::cuda
