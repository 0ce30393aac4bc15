// SPDX-License-Identifier: Apache-2.0
// NCCL error checking: a macro captures the call text and location, a function throws with NCCL's
// own last error text.
#pragma once

#include <nccl.h>

#include "common/error.hpp"
#include "gpu/cuda_check.hpp"

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

#define FB_NCCL_CHECK(call) ::fabricbench::nccl::check((call), #call, __FILE__, __LINE__)
