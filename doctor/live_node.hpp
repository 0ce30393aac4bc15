// SPDX-License-Identifier: Apache-2.0
// What fb_doctor and fb_health read from the running process rather than from sysfs: the NCCL it
// would load, the variables in force it reads, and the --root folder for this host.
#pragma once

#include <map>
#include <string>

namespace fabricbench::doctor {

/// The NCCL this process would load, as "2.28.9" ("" when there is none).
std::string nccl_library_version();
/// The NCCL_* environment variables of this process.
std::map<std::string, std::string> nccl_environment();
/// The variables the doctor reads besides NCCL_*: where the job rendezvouses (MASTER_ADDR,
/// MASTER_PORT), MPI's out-of-band interface (OMPI_MCA_oob_tcp_if_include) and the Slurm job step
/// (SLURM_JOB_ID, SLURM_STEP_ID, SLURM_SCRIPT_CONTEXT), with the NCCL_* ones. Never the whole
/// environment: it holds secrets.
std::map<std::string, std::string> doctor_environment();
/// `root` with every "%h" replaced by `host` (one recorded tree per node).
std::string expand_host(std::string root, const std::string& host);

}  // namespace fabricbench::doctor
