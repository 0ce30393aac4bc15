// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/cuda_check.hpp"

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

}  // namespace fabricbench::cuda

namespace fabricbench::nccl {

void check(ncclResult_t rc, const char* call, const char* file, int line, ncclComm_t comm) {
  if (rc == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  std::string detail = (last && *last) ? fmt::format("; NCCL says: {}", last) : std::string();
  throw NcclError(fmt::format("{} failed: {}{} at {}:{}", call, ncclGetErrorString(rc), detail, file, line), rc);
}

}  // namespace fabricbench::nccl
