// SPDX-License-Identifier: Apache-2.0
// The kernel limits RDMA needs, as the job's processes see them: the locked-memory limit (every
// registration pins memory), vm.max_map_count (each registration and queue pair maps memory: a
// QP-heavy process runs out of maps below a few hundred thousand), the open-files limit (sockets,
// verbs contexts and CUDA IPC handles are file descriptors) and the hugepages reserved. Per-process
// limits differ between a login shell and a Slurm job step: the finding says where they were seen.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "doctor/finding.hpp"
#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

struct HealthRules;
struct HealthCheck;

/// vm.max_map_count judged below this where RDMA is (UCX's maintainers advise 262144 for
/// "ibv_reg_mr failed: Cannot allocate memory", openucx/ucx#6264; the kernel's default is 65530).
inline constexpr double kAdvisedMaxMapCount = 262144;
/// Open files judged below this where RDMA is (Debian's default soft limit is 1024).
inline constexpr double kAdvisedOpenFiles = 65536;
/// Locked memory judged below this where RDMA is.
inline constexpr double kLeastMemlockBytes = 1024.0 * 1024 * 1024;

/// Where the limits were seen from, for the findings: "" outside Slurm; "seen from inside job step
/// 1234.0 (a login shell's limits differ)" when SLURM_JOB_ID is set; the prolog is named as such.
/// `environment`: SLURM_JOB_ID, SLURM_STEP_ID, SLURM_SCRIPT_CONTEXT of the running process.
std::string limits_vantage(const std::map<std::string, std::string>& environment);

/// "memlock", "max-map-count", "open-files", "hugepages" findings. `judged`: the node has an RDMA
/// device or the rules require one (elsewhere the limits are INFO: only RDMA needs them).
/// `vantage` (limits_vantage) is added to the per-process limits' findings.
void check_kernel_limits(const SysTree& tree, bool judged, const std::string& vantage, std::vector<Finding>& out);

/// fb_health's min_max_map_count and min_open_files (the soft limit): FAIL below, or when the
/// value cannot be read.
void judge_kernel_rules(const SysTree& tree, const HealthRules& rules, std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
