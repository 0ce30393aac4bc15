// SPDX-License-Identifier: Apache-2.0
// Exporting GPU memory as a dma-buf file descriptor: the path ibv_reg_dmabuf_mr takes to register
// GPU memory without nvidia-peermem (kernel 5.12+, driver 515+, open kernel modules on some GPUs).
#pragma once

#include <cstddef>

namespace fabricbench::cuda {

/// An open dma-buf descriptor for a range of device memory; closed on destruction.
class DmabufRange {
 public:
  DmabufRange() = default;
  DmabufRange(DmabufRange&& other) noexcept;
  DmabufRange& operator=(DmabufRange&& other) noexcept;
  DmabufRange(const DmabufRange&) = delete;
  DmabufRange& operator=(const DmabufRange&) = delete;
  ~DmabufRange();

  int fd() const { return fd_; }
  std::size_t size() const { return size_; }

  /// Exports [device_pointer, device_pointer + bytes) rounded up to whole pages, as
  /// cuMemGetHandleForAddressRange requires. The pointer must start a page (cudaMalloc's do).
  /// Throws Error saying why the driver refused (old driver, no dma-buf support on this GPU or kernel).
  static DmabufRange export_range(const void* device_pointer, std::size_t bytes);

 private:
  int fd_ = -1;
  std::size_t size_ = 0;
};

}  // namespace fabricbench::cuda
