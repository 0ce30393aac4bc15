// SPDX-License-Identifier: Apache-2.0
#include "gpu/cuda_check.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace fabricbench::cuda {

void check(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc == cudaSuccess) return;
  throw CudaError(
      fmt::format("{} failed: {} ({}) at {}:{}", call, cudaGetErrorString(rc), cudaGetErrorName(rc), file, line), rc);
}

void check_noexcept(cudaError_t rc, const char* call, const char* file, int line) noexcept {
  if (rc != cudaSuccess)
    std::fprintf(stderr, "fabricbench: warning: %s failed: %s at %s:%d\n", call, cudaGetErrorString(rc), file, line);
}

void select_gpu(int gpu, const std::string& flag) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0)
    throw UsageError(fmt::format("{} {}: no CUDA GPU on this node ({}); check nvidia-smi and the driver", flag, gpu,
                                 rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc)));
  if (gpu < 0 || gpu >= count)
    throw UsageError(fmt::format("{} {}: this node has {} GPU(s), numbered 0..{}", flag, gpu, count, count - 1));
  FB_CUDA_CHECK(cudaSetDevice(gpu));
}

}  // namespace fabricbench::cuda
