// SPDX-License-Identifier: Apache-2.0
// One result of the doctor's checks: PASS / INFO / WARN / FAIL, what was found and what to do.
#pragma once

#include <string>

namespace fabricbench::doctor {

enum class Status { kPass, kInfo, kWarn, kFail };
const char* status_name(Status status);

struct Finding {
  std::string check;  ///< "gpus", "rdma-port", "acs"...
  Status status = Status::kInfo;
  std::string detail;  ///< what was found
  std::string remedy;  ///< what to do ("" for PASS/INFO)
};

}  // namespace fabricbench::doctor
