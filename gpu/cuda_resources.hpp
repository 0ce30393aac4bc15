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

/// Memory from one of CUDA's allocators, released by its matching free.
template <cudaError_t (*Allocate)(void**, std::size_t), class Release>
class Allocation {
 public:
  Allocation() = default;
  explicit Allocation(std::size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (bytes > 0) check(Allocate(&p, bytes), "CUDA allocation", __FILE__, __LINE__);
    memory_.reset(p);
  }
  std::byte* data() const { return static_cast<std::byte*>(memory_.get()); }
  std::size_t size() const { return bytes_; }

 private:
  std::unique_ptr<void, Release> memory_;
  std::size_t bytes_ = 0;
};

namespace detail {
inline cudaError_t malloc_device(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline cudaError_t malloc_host(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
}  // namespace detail

/// Device memory from cudaMalloc on the current device.
using DeviceBuffer = Allocation<detail::malloc_device, detail::FreeDevice>;
/// Page-locked host memory from cudaMallocHost: what the GPU copies to and from at full PCIe speed.
using PinnedHostBuffer = Allocation<detail::malloc_host, detail::FreeHost>;

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
