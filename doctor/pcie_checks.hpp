// SPDX-License-Identifier: Apache-2.0
// PCIe links trained below what they can do: a GPU or HCA at x8 instead of x16, or at Gen3 instead
// of Gen5, halves what NCCL and GPUDirect RDMA move. Every link from each NVIDIA GPU and RDMA device
// up to its root port is read from sysfs (current_link_width/speed against max_link_width/speed of
// both ends). An idle GPU lowers its link speed to save power (PCIe link power management: an idle
// H100/H200 shows 2.5 GT/s), so speed below max at full width above a GPU is INFO; width below max
// is the real fault.
#pragma once

#include <string>
#include <vector>

#include "doctor/finding.hpp"
#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

struct HealthRules;
struct HealthCheck;

/// One PCIe link: between a port (root port or switch downstream port) and the device below it.
struct PcieLink {
  std::string upper;          ///< the port above ("" when the device hangs off the host bridge, as in a VM)
  std::string lower;          ///< the device below: a GPU, an HCA, or a switch's upstream port
  std::string leads_to;       ///< the GPUs and RDMA devices behind it: "GPU 0000:19:00.0, mlx5_0"
  bool lower_is_end = false;  ///< `lower` is the GPU or HCA itself, not a bridge
  bool gpu_below = false;
  bool readable = false;              ///< the current width and speed could be read
  double width = 0, gts = 0;          ///< as trained now: lanes, GT/s
  double max_width = 0, max_gts = 0;  ///< the most both ends allow
};

/// Every link from each GPU and RDMA device up to its root port, each link once.
std::vector<PcieLink> pcie_links(const SysTree& tree);

/// "Gen5" for 32 GT/s; "Gen?" for 0.
std::string pcie_generation(double gts);

/// "pcie-link" findings: WARN for a width below max, or a speed below max where no GPU is behind;
/// INFO for a GPU's idle speed at full width; one PASS for the links at their best; INFO when
/// there is nothing to read.
void check_pcie_links(const std::vector<PcieLink>& links, std::vector<Finding>& out);

/// fb_health's min_pcie_width and min_pcie_gen ("pcie-width", "pcie-gen"): FAIL for a link below,
/// or when no link could be read. A GPU's link at idle speed is judged on what both ends allow.
void judge_pcie_rules(const std::vector<PcieLink>& links, const HealthRules& rules, std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
