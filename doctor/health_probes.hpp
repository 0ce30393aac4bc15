// SPDX-License-Identifier: Apache-2.0
// fb_health's measurements on the live node, each bounded in time: the GPU copies and the NCCL
// all_reduce run as child processes (fb_micro_cuda_copy, fb_all_reduce beside this executable)
// that are killed at their deadline, so a stuck GPU ends as a FAIL naming the step instead of
// holding the prolog; the HCA loopback polls its completions against a deadline.
#pragma once

#include <vector>

#include "doctor/checks.hpp"
#include "doctor/health_measurements.hpp"

namespace fabricbench::doctor {

/// Every local GPU's host->GPU, GPU->host and on-GPU copy at 64 MiB, within `seconds`.
GpuCopyResult probe_gpu_copy(double seconds);

/// One NCCL all_reduce over `gpus` local GPUs in one process (-g), 64 MiB to 1 GiB, within
/// `seconds`. `inject_hang`: the child stops as a stuck GPU would (tests the budget).
AllReduceResult probe_all_reduce(int gpus, double seconds, bool inject_hang);

/// A loopback write on each ACTIVE/LinkUp port of `ports`, each within `seconds_each` and all
/// within `seconds`. Empty, with `unavailable` set, when this build has no verbs.
std::vector<PortLoopback> probe_loopback(const std::vector<RdmaPort>& ports, double seconds_each, double seconds,
                                         std::string& unavailable);

}  // namespace fabricbench::doctor
