// SPDX-License-Identifier: Apache-2.0
// What fb_doctor and fb_health read from the running process rather than from sysfs: the NCCL it
// would load, the NCCL_* variables in force, and the --root folder for this host.
#pragma once

#include <map>
#include <string>

namespace fabricbench::doctor {

/// The NCCL this process would load, as "2.28.9" ("" when there is none).
std::string nccl_library_version();
/// The NCCL_* environment variables of this process.
std::map<std::string, std::string> nccl_environment();
/// `root` with every "%h" replaced by `host` (one recorded tree per node).
std::string expand_host(std::string root, const std::string& host);

}  // namespace fabricbench::doctor
