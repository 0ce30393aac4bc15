// SPDX-License-Identifier: Apache-2.0
// The preflight checks of one node, each a PASS / INFO / WARN / FAIL finding with a one-line
// remedy: GPUs and driver, RDMA ports, RoCE GIDs, the GPUDirect RDMA path (nvidia-peermem or
// dma-buf), memlock, GPU-NIC PCIe and NUMA affinity, PCIe ACS on the bridges between them, the
// IOMMU mode, and NCCL_* variables naming devices or interfaces the node lacks.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

enum class Status { kPass, kInfo, kWarn, kFail };
const char* status_name(Status status);

struct Finding {
  std::string check;   ///< "gpus", "rdma-port", "acs"...
  Status status = Status::kInfo;
  std::string detail;  ///< what was found
  std::string remedy;  ///< what to do ("" for PASS/INFO)
};

struct NodeReport {
  std::string host;
  std::vector<Finding> findings;
  std::map<std::string, std::string> facts;  ///< driver, kernel, nccl: compared across nodes
};

/// One RDMA port as sysfs shows it (the words ibstat prints).
struct RdmaPort {
  std::string device, port;
  std::string state, phys_state, rate, link_layer;  ///< "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand"
  bool active() const { return state.find("ACTIVE") != std::string::npos; }
  bool link_up() const { return phys_state.find("LinkUp") != std::string::npos; }
  /// The rate's Gb/s ("400 Gb/sec (4X NDR)" -> 400); 0 when unreadable.
  double gbps() const;
};
/// Every port of every device under /sys/class/infiniband, by device then port.
std::vector<RdmaPort> rdma_ports(const SysTree& tree);
/// NVIDIA GPUs (display or 3D controllers of vendor 0x10de) on the PCI bus, by address.
std::vector<std::string> nvidia_gpu_addresses(const SysTree& tree);

/// `environment`: the NCCL_* variables of the run. `nccl_version`: the library this process
/// would load ("" when none). The memlock limit is judged where there is an RDMA device or
/// `rdma_required` (fb_health's rules ask for HCAs); elsewhere it is INFO. Files the tree could not
/// give (SysTree::skipped) are WARN findings "skipped-file".
NodeReport inspect_node(const SysTree& tree, const std::map<std::string, std::string>& environment,
                        const std::string& host, const std::string& nccl_version, bool rdma_required = false);

/// Findings about the nodes together: versions that differ between them.
std::vector<Finding> compare_nodes(const std::vector<NodeReport>& nodes);

/// The ACS Control register of a PCI config space (extended capability 0x000D); -1 when absent,
/// -2 when the extended space is not readable (256 bytes: not root).
int acs_control(const std::string& config);

/// The report as JSON. Its strings come from the machine: write it with json_text.
nlohmann::json to_json(const NodeReport& report);
NodeReport report_from_json(const nlohmann::json& json);

/// `value` as JSON text with every byte of invalid UTF-8 replaced by U+FFFD: a sysfs file may
/// hold any byte, and nlohmann's default dump throws on one. `indent` as nlohmann's dump.
std::string json_text(const nlohmann::json& value, int indent = -1);

}  // namespace fabricbench::doctor
