// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/nccl_check.hpp"

#include <fmt/format.h>

namespace fabricbench::nccl {

void check(ncclResult_t rc, const char* call, const char* file, int line, ncclComm_t comm) {
  if (rc == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  std::string detail = (last && *last) ? fmt::format("; NCCL says: {}", last) : std::string();
  throw NcclError(fmt::format("{} failed: {}{} at {}:{}", call, ncclGetErrorString(rc), detail, file, line), rc);
}

}  // namespace fabricbench::nccl
