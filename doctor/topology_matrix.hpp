// SPDX-License-Identifier: Apache-2.0
// The node's GPUs and RDMA devices as NCCL will see them: a matrix like `nvidia-smi topo -m` of how
// far apart each two are on the PCI tree (PIX, PXB, PHB, NODE, SYS), with each one's NUMA node,
// computed from sysfs paths alone, so "GPU and HCA on different CPU sockets" is shown, not guessed.
// NVLink does not show in sysfs: two GPUs get their PCIe distance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/finding.hpp"
#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

struct TopologyMatrix {
  struct Device {
    std::string name;  ///< "GPU0" (by PCI address order), "mlx5_0"
    std::string bdf;   ///< 0000:19:00.0
    std::string numa;  ///< "-1" when the kernel does not know
    bool gpu = false;
  };
  std::vector<Device> devices;                  ///< GPUs first, then RDMA devices
  std::vector<std::vector<std::string>> cells;  ///< [row][column]: "X" on the diagonal, else PIX..SYS
  std::string left_out;  ///< why there is no matrix though there are devices (more than any node has)
};

/// The matrix of this tree's NVIDIA GPUs and RDMA devices with a PCI function.
TopologyMatrix topology_matrix(const SysTree& tree);

/// The matrix as lines of text (a header row, one row per device, a legend); none when empty.
std::vector<std::string> matrix_lines(const TopologyMatrix& matrix);

/// An INFO finding "topology" summing the GPU-to-RDMA-device distances up; none when either is absent.
void summarize_topology(const TopologyMatrix& matrix, std::vector<Finding>& out);

nlohmann::json to_json(const TopologyMatrix& matrix);
TopologyMatrix topology_from_json(const nlohmann::json& json);

}  // namespace fabricbench::doctor
