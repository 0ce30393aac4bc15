// SPDX-License-Identifier: Apache-2.0
// Where the GPUs and RDMA devices sit on the PCI tree, from sysfs paths: the chain of bridges from
// the root port down, the host bridge, the NUMA node, and NCCL's names for how far apart two
// devices are (PIX, PXB, PHB, NODE, SYS, as nvidia-smi topo -m prints them).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

/// One PCI function as sysfs places it.
struct Pci {
  std::string bdf;   ///< 0000:19:00.0
  std::string path;  ///< /sys/devices/pci0000:17/0000:17:00.0/.../0000:19:00.0
  std::string numa;  ///< "0", "1"; "-1" when the kernel does not know
};

/// The PCI components of a device path ("0000:17:00.0", ...), root port first, the device last.
std::vector<std::string> pci_chain(const std::string& path);

/// The host bridge of a device path ("pci0000:17"); "" when the path has none.
std::string root_complex(const std::string& path);

/// NCCL's name for how far apart two PCI devices are: PIX (one bridge between them), PXB (several
/// bridges, no host bridge), PHB (through the host bridge), NODE (between host bridges of one NUMA
/// node), SYS (across NUMA nodes: the CPUs' interconnect).
std::string pci_distance(const Pci& a, const Pci& b);

/// 0 for PIX up to 4 for SYS: nearer sorts first.
int distance_rank(const std::string& distance);

/// NVIDIA GPUs (display or 3D controllers of vendor 0x10de) on the PCI bus, by address.
std::vector<std::string> nvidia_gpu_addresses(const SysTree& tree);

/// The NVIDIA GPUs with their sysfs paths and NUMA nodes, by address.
std::vector<Pci> gpu_functions(const SysTree& tree);

/// Each RDMA device of /sys/class/infiniband that has a PCI function ("mlx5_0" and where it sits);
/// a software device (rxe, siw) has none and is left out.
std::vector<std::pair<std::string, Pci>> rdma_functions(const SysTree& tree);

}  // namespace fabricbench::doctor
