// SPDX-License-Identifier: Apache-2.0
// fb_health's judgement of one node: the doctor's findings plus what the rules file expects (GPU
// count, active RDMA ports and their rate, GPUDirect RDMA, the all_reduce busbw over the local
// GPUs), each a check with a status. Fail closed: a check that could not be made is a FAIL with
// its reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "doctor/checks.hpp"
#include "doctor/health_measurements.hpp"

namespace fabricbench::doctor {

/// What a node must have. Unset items are not judged (the doctor's findings still are).
struct HealthRules {
  std::optional<int> gpus;               ///< GPUs on the PCI bus
  std::optional<int> hcas;               ///< RDMA ports ACTIVE and LinkUp
  std::optional<double> min_port_gbps;   ///< every port's rate at least this
  std::optional<double> min_busbw_gbps;  ///< all_reduce over every local GPU, plateau busbw (GB/s)
  std::optional<double> min_copy_gbps;   ///< each GPU's pinned host<->GPU copy, each direction (GB/s)
  std::optional<double> min_loopback_gbps;  ///< each active port's loopback RDMA write (Gb/s)
  bool require_gdr = false;              ///< the doctor's GPUDirect RDMA finding must PASS
};

/// Parses "key = value" lines ('#' starts a comment): gpus, hcas, min_port_gbps, min_busbw_gbps,
/// min_copy_gbps, min_loopback_gbps, require_gdr (yes/no). Throws UsageError naming the line for an
/// unknown key or a bad value.
HealthRules parse_health_rules(const std::string& text, const std::string& source);

struct HealthCheck {
  std::string name;    ///< "rdma-port", "gpu-count", "all_reduce", "doctor:memlock"...
  Status status = Status::kPass;
  std::string detail;
  std::string remedy;  ///< "" for PASS/INFO
};

/// The node's checks: its doctor findings first, then the rules' items, then the measurements.
std::vector<HealthCheck> judge_node(const SysTree& tree, const NodeReport& report, const HealthRules& rules,
                                    const NodeMeasurements& measured);

/// FAIL when any check fails, else WARN when any warns, else PASS.
Status overall(const std::vector<HealthCheck>& checks);

/// The one line a Slurm prolog passes as the drain reason: "fb_health: FAIL node07: mlx5_3 port 1:
/// DOWN, Polling (no link: check the cable, ...)"; "fb_health: OK node07 (12 checks)" when healthy.
std::string summary_line(const std::string& host, const std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
