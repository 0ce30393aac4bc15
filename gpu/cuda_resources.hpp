// SPDX-License-Identifier: Apache-2.0
// Move-only owners of CUDA handles: device and pinned host memory, streams, events, graphs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "gpu/cuda_check.hpp"

namespace fabricbench::cuda {

namespace detail {
struct FreeDevice {
  void operator()(void* p) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
};
struct FreeHost {
  void operator()(void* p) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(p)); }
};
struct DestroyStream {
  void operator()(CUstream_st* s) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s)); }
};
struct DestroyEvent {
  void operator()(CUevent_st* e) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e)); }
};
struct DestroyGraphExec {
  void operator()(CUgraphExec_st* g) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(g)); }
};
struct DestroyGraph {
  void operator()(CUgraph_st* g) const noexcept { FB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(g)); }
};
}  // namespace detail

/// Device memory from cudaMalloc on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (bytes > 0) FB_CUDA_CHECK(cudaMalloc(&p, bytes));
    memory_.reset(p);
  }
  std::byte* data() const { return static_cast<std::byte*>(memory_.get()); }
  std::size_t size() const { return bytes_; }

 private:
  std::unique_ptr<void, detail::FreeDevice> memory_;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory from cudaMallocHost: what the GPU copies to and from at full PCIe speed.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  explicit PinnedHostBuffer(std::size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (bytes > 0) FB_CUDA_CHECK(cudaMallocHost(&p, bytes));
    memory_.reset(p);
  }
  std::byte* data() const { return static_cast<std::byte*>(memory_.get()); }
  std::size_t size() const { return bytes_; }

 private:
  std::unique_ptr<void, detail::FreeHost> memory_;
  std::size_t bytes_ = 0;
};

using Stream = std::unique_ptr<CUstream_st, detail::DestroyStream>;
using Event = std::unique_ptr<CUevent_st, detail::DestroyEvent>;
using Graph = std::unique_ptr<CUgraph_st, detail::DestroyGraph>;
using GraphExec = std::unique_ptr<CUgraphExec_st, detail::DestroyGraphExec>;

inline Stream make_stream() {
  cudaStream_t s = nullptr;
  FB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

inline Event make_event() {
  cudaEvent_t e = nullptr;
  FB_CUDA_CHECK(cudaEventCreate(&e));
  return Event(e);
}

static_assert(!std::is_copy_constructible_v<DeviceBuffer> && std::is_move_constructible_v<DeviceBuffer>);
static_assert(!std::is_copy_constructible_v<Stream> && std::is_move_constructible_v<Stream>);

}  // namespace fabricbench::cuda
