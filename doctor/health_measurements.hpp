// SPDX-License-Identifier: Apache-2.0
// What fb_health measures on a live node, and how each measurement is judged: every local GPU's
// copy bandwidth, each active RDMA port's loopback write, and an NCCL all_reduce over the local
// GPUs. Fail closed: a measurement that could not be made is a FAIL with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doctor/checks.hpp"

namespace fabricbench::doctor {

struct HealthRules;
struct HealthCheck;

/// The all_reduce measurement, or why there is none.
struct AllReduceResult {
  double plateau_busbw_gbps = 0;
  double wall_seconds = 0;
  std::string failure;  ///< non-empty: it could not be made (timeout, exit code, no GPU)
};

/// One GPU's cudaMemcpy bandwidth at one large size (pinned host memory), GB/s (1e9 B/s).
struct GpuCopy {
  int gpu = 0;
  std::string pci_address;  ///< "0000:9B:00.0", as CUDA names it
  double host_to_gpu_gbps = 0;
  double gpu_to_host_gbps = 0;
  double on_gpu_gbps = 0;  ///< device-to-device copy, bytes copied (not read + written)
};

/// Every local GPU's copies, or why there are none.
struct GpuCopyResult {
  std::vector<GpuCopy> gpus;
  double wall_seconds = 0;
  std::string failure;  ///< non-empty: the measurement could not be made
};

/// RDMA writes between two QPs on one port (the HCA's own loopback).
struct PortLoopback {
  std::string device;  ///< mlx5_0
  int port = 1;
  double gbps = 0;
  double line_rate_gbps = 0;
  bool nominal_rate = false;  ///< Soft-RoCE: the rate is no wire speed
  std::uint64_t wrong_bytes = 0;
  std::string failure;  ///< non-empty: the loopback could not run (refused, stuck HCA)
};

/// What fb_health measured; an unset item was not measured (a recorded tree, no GPU, no port).
struct NodeMeasurements {
  std::optional<AllReduceResult> all_reduce;
  std::optional<GpuCopyResult> gpu_copy;
  std::vector<PortLoopback> loopback;
  std::string loopback_unavailable;  ///< non-empty: why no loopback could be tried (build without verbs)
};

/// A GPU below this fraction of the node's median copy rate (same direction) is an outlier.
inline constexpr double kGpuCopyOutlierFraction = 0.8;

/// One check per GPU ("gpu-copy"): FAIL below the rules' min_copy_gbps in either direction, or
/// below kGpuCopyOutlierFraction x the node's median when the node has several GPUs.
void judge_gpu_copy(const GpuCopyResult& copy, const HealthRules& rules, std::vector<HealthCheck>& checks);

/// One check per port ("hca-loopback"): FAIL when it could not run, moved wrong data, or fell
/// below the rules' min_loopback_gbps.
void judge_loopback(const NodeMeasurements& measured, const HealthRules& rules, std::vector<HealthCheck>& checks);

/// The "all_reduce" check: FAIL when not measured, or below the rules' min_busbw_gbps.
void judge_all_reduce(const AllReduceResult& all_reduce, const HealthRules& rules, std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
