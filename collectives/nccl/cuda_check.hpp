// SPDX-License-Identifier: Apache-2.0
// CUDA and NCCL error checking: a macro captures the call text and location, a function throws.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "common/error.hpp"

namespace fabricbench::cuda {

class CudaError : public Error {
 public:
  CudaError(const std::string& what, cudaError_t code) : Error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

void check(cudaError_t rc, const char* call, const char* file, int line);
/// For destructors: warns instead of throwing.
void check_noexcept(cudaError_t rc, const char* call, const char* file, int line) noexcept;

}  // namespace fabricbench::cuda

namespace fabricbench::nccl {

class NcclError : public Error {
 public:
  NcclError(const std::string& what, ncclResult_t code) : Error(what), code_(code) {}
  ncclResult_t code() const { return code_; }

 private:
  ncclResult_t code_;
};

/// Throws NcclError carrying ncclGetErrorString and NCCL's own last error text (ncclGetLastError).
void check(ncclResult_t rc, const char* call, const char* file, int line, ncclComm_t comm = nullptr);

}  // namespace fabricbench::nccl

#define FB_CUDA_CHECK(call) ::fabricbench::cuda::check((call), #call, __FILE__, __LINE__)
#define FB_CUDA_CHECK_NOEXCEPT(call) ::fabricbench::cuda::check_noexcept((call), #call, __FILE__, __LINE__)
#define FB_NCCL_CHECK(call) ::fabricbench::nccl::check((call), #call, __FILE__, __LINE__)
