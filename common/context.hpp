// SPDX-License-Identifier: Apache-2.0
// The run context stored with every result: what ran, where, with which software and settings.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/control_plane.hpp"
#include "common/topology.hpp"

namespace fabricbench {

/// Environment variables whose prefix is kept in results. Never the whole environment: it holds
/// secrets.
inline constexpr const char* kCapturedEnvPrefixes[] = {"NCCL_", "UCX_",       "OMPI_",       "CUDA_",
                                                       "PMIX_", "SLURM_JOB_", "FABRICBENCH_"};

/// Variables with one of kCapturedEnvPrefixes, sorted by name.
nlohmann::json captured_environment();

/// "2026-12-02T12:34:56Z"
std::string utc_timestamp();

/// First "model name" of /proc/cpuinfo, or "unknown".
std::string cpu_model();

/// Peak resident set size of this process (VmHWM), in bytes; 0 when unknown.
std::uint64_t peak_rss_bytes();

/// Builds the context of a run. Every rank must call (it gathers nothing itself, but the topology
/// passed in came from a collective).
nlohmann::json capture_context(const Topology& topology, const ControlPlane& world,
                               const std::vector<std::string>& argv);

}  // namespace fabricbench
