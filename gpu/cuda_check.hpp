// SPDX-License-Identifier: Apache-2.0
// CUDA error checking: a macro captures the call text and location, a function throws.
#pragma once

#include <cuda_runtime_api.h>

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

/// Makes `gpu` current; throws UsageError naming how many GPUs this node has when it does not exist.
void select_gpu(int gpu, const std::string& flag);

}  // namespace fabricbench::cuda

#define FB_CUDA_CHECK(call) ::fabricbench::cuda::check((call), #call, __FILE__, __LINE__)
#define FB_CUDA_CHECK_NOEXCEPT(call) ::fabricbench::cuda::check_noexcept((call), #call, __FILE__, __LINE__)
