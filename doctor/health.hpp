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
  std::optional<int> gpus;                  ///< GPUs on the PCI bus
  std::optional<int> hcas;                  ///< RDMA ports ACTIVE and LinkUp
  std::optional<double> min_port_gbps;      ///< every port's rate at least this
  std::optional<double> min_busbw_gbps;     ///< all_reduce over every local GPU, plateau busbw (GB/s)
  std::optional<double> min_copy_gbps;      ///< each GPU's pinned host<->GPU copy, each direction (GB/s)
  std::optional<double> min_loopback_gbps;  ///< each active port's loopback RDMA write (Gb/s)
  bool require_gdr = false;                 ///< the doctor's GPUDirect RDMA finding must PASS
  std::optional<int> min_pcie_width;        ///< every PCIe link of the GPUs and HCAs up to the root port, lanes
  std::optional<int> min_pcie_gen;          ///< the same links' generation (an idle GPU's link: what both ends allow)
  std::optional<double> min_max_map_count;  ///< vm.max_map_count
  std::optional<double> min_open_files;     ///< the soft open-files limit
  std::optional<double> max_link_errors_per_hour;  ///< each port's error counters together, over the counter window
};

/// Parses "key = value" lines ('#' starts a comment): gpus, hcas (whole numbers, 0 to 1024),
/// min_port_gbps, min_busbw_gbps, min_copy_gbps, min_loopback_gbps (0 to 100000), require_gdr
/// (yes/no), min_pcie_width (1 to 32), min_pcie_gen (1 to 7), min_max_map_count and min_open_files
/// (whole numbers, 0 to 2147483647), max_link_errors_per_hour (0 to 1e12). Throws UsageError
/// naming the file, line and key for an unknown key or a bad value (not a number, NaN, an
/// infinity, out of range).
HealthRules parse_health_rules(const std::string& text, const std::string& source);

/// The rules file at `path`: a regular file of at most SysTree::kMaxFileBytes, never a FIFO or a
/// device (read as SysTree reads). Throws UsageError naming --rules, the path and why.
std::string read_rules_file(const std::string& path);

/// The rules ask for RDMA (HCAs, a port rate, a loopback rate, GPUDirect RDMA, a link error rate):
/// the kernel limits are judged even where no RDMA device shows.
bool needs_rdma(const HealthRules& rules);

struct HealthCheck {
  std::string name;  ///< "rdma-port", "gpu-count", "all_reduce", "doctor:memlock"...
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
/// No control character (newline, escape) or double quote; invalid UTF-8 replaced.
std::string summary_line(const std::string& host, const std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
