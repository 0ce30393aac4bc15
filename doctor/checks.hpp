// SPDX-License-Identifier: Apache-2.0
// The preflight checks of one node, each a PASS / INFO / WARN / FAIL finding with a one-line
// remedy: GPUs and driver, RDMA ports (state, rates, error counters, firmware), RoCE GIDs, the
// GPUDirect RDMA path (nvidia-peermem or dma-buf), kernel limits (memlock, vm.max_map_count, open
// files, hugepages), GPU-NIC PCIe and NUMA affinity and the topology matrix, PCIe links trained
// down, PCIe ACS on the bridges between GPUs and NICs, the IOMMU mode, and NCCL_* variables naming
// devices or interfaces the node lacks. Each theme has its file; this one runs them in order.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/utf8.hpp"  // json_text: a sysfs file may hold any byte
#include "doctor/finding.hpp"
#include "doctor/pci_paths.hpp"
#include "doctor/port_checks.hpp"
#include "doctor/sys_tree.hpp"
#include "doctor/topology_matrix.hpp"

namespace fabricbench::doctor {

struct NodeReport {
  std::string host;
  std::vector<Finding> findings;
  std::map<std::string, std::string> facts;  ///< driver, kernel, nccl, hca firmware: compared across nodes
  std::vector<RdmaPort> ports;               ///< compared across nodes (rates)
  TopologyMatrix topology;                   ///< GPUs and RDMA devices, as NCCL sees them
  CounterWindow counters;                    ///< the readings behind the link-errors findings (not in the JSON)
  std::vector<PortErrorRate> link_errors;    ///< the rates made from them
};

/// What the node is inspected with besides its tree.
struct NodeContext {
  bool rdma_required = false;  ///< the rules ask for HCAs: the kernel limits are judged without one
  std::string vantage;         ///< where the limits are seen from (limits_vantage); "" for a recorded tree
  /// The port counters read twice; unset: inspect_node reads them once itself (no rate).
  std::optional<CounterWindow> counters;
};

/// `environment`: the NCCL_* variables of the run. `nccl_version`: the library this process
/// would load ("" when none). The kernel limits are judged where there is an RDMA device or
/// `context.rdma_required`; elsewhere they are INFO. Files the tree could not give
/// (SysTree::skipped) are WARN findings "skipped-file".
NodeReport inspect_node(const SysTree& tree, const std::map<std::string, std::string>& environment,
                        const std::string& host, const std::string& nccl_version, const NodeContext& context);
/// The same with only `rdma_required` given.
NodeReport inspect_node(const SysTree& tree, const std::map<std::string, std::string>& environment,
                        const std::string& host, const std::string& nccl_version, bool rdma_required = false);

/// Findings about the nodes together: versions and firmware that differ between them, ports slower
/// than other nodes' ports.
std::vector<Finding> compare_nodes(const std::vector<NodeReport>& nodes);

/// The ACS Control register of a PCI config space (extended capability 0x000D); -1 when absent,
/// -2 when the extended space is not readable (256 bytes: not root).
int acs_control(const std::string& config);

/// The report as JSON. Its strings come from the machine: write it with json_text.
nlohmann::json to_json(const NodeReport& report);
NodeReport report_from_json(const nlohmann::json& json);

}  // namespace fabricbench::doctor
