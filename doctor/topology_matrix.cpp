// SPDX-License-Identifier: Apache-2.0
#include "doctor/topology_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "doctor/pci_paths.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {

// Beyond any node (8-16 GPUs and as many HCAs): a recorded tree with thousands of GPU entries
// would make a matrix of millions of cells (4,000 took 40 s and 0.5 GB).
constexpr std::size_t kMostDevices = 256;

TopologyMatrix topology_matrix(const SysTree& tree) {
  TopologyMatrix m;
  std::vector<Pci> places;
  int index = 0;
  for (const Pci& gpu : gpu_functions(tree)) {
    m.devices.push_back({fmt::format("GPU{}", index++), gpu.bdf, gpu.numa, true});
    places.push_back(gpu);
  }
  for (const auto& [name, hca] : rdma_functions(tree)) {
    m.devices.push_back({name, hca.bdf, hca.numa, false});
    places.push_back(hca);
  }
  if (places.size() > kMostDevices) {
    m = {};
    m.left_out = fmt::format("{} GPUs and RDMA devices, more than the {} a node has: no topology matrix", places.size(),
                             kMostDevices);
    return m;
  }
  for (std::size_t row = 0; row < places.size(); ++row) {
    m.cells.emplace_back();
    for (std::size_t column = 0; column < places.size(); ++column)
      m.cells.back().push_back(row == column ? "X" : pci_distance(places[row], places[column]));
  }
  return m;
}

std::vector<std::string> matrix_lines(const TopologyMatrix& m) {
  std::vector<std::string> lines;
  if (m.devices.empty()) return lines;
  std::size_t width = 4;
  for (const auto& d : m.devices) width = std::max(width, d.name.size());
  width += 2;
  std::string header(width, ' ');
  for (const auto& d : m.devices) header += fmt::format("{:<{}}", d.name, width);
  lines.push_back(header + "NUMA  PCI");
  for (std::size_t row = 0; row < m.devices.size(); ++row) {
    std::string line = fmt::format("{:<{}}", m.devices[row].name, width);
    for (const std::string& cell : m.cells.at(row)) line += fmt::format("{:<{}}", cell, width);
    lines.push_back(line + fmt::format("{:<6}{}", m.devices[row].numa, m.devices[row].bdf));
  }
  lines.push_back(
      "X itself; PIX one PCIe bridge between; PXB several bridges, no host bridge; PHB through a host "
      "bridge; NODE between host bridges of one NUMA node; SYS across NUMA nodes (the CPUs' "
      "interconnect). NVLink does not show in sysfs (nvidia-smi topo -m shows it as NV#).");
  return lines;
}

void summarize_topology(const TopologyMatrix& m, std::vector<Finding>& out) {
  if (!m.left_out.empty()) {
    out.push_back(
        {"topology", Status::kWarn, m.left_out, "a recorded tree that is not one node's? (fb_doctor --root)"});
    return;
  }
  std::map<std::string, int> pairs;  // distance -> GPU/RDMA-device pairs at it
  std::set<std::string> numa;
  std::size_t gpus = 0;
  for (std::size_t row = 0; row < m.devices.size(); ++row) {
    numa.insert(m.devices[row].numa);
    if (!m.devices[row].gpu) continue;
    ++gpus;
    for (std::size_t column = 0; column < m.devices.size(); ++column)
      if (!m.devices[column].gpu) ++pairs[m.cells.at(row).at(column)];
  }
  if (gpus == 0 || gpus == m.devices.size()) return;
  std::vector<std::pair<std::string, int>> ordered(pairs.begin(), pairs.end());
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return distance_rank(a.first) < distance_rank(b.first); });
  std::vector<std::string> counts;
  for (const auto& [distance, count] : ordered) counts.push_back(fmt::format("{} {}", count, distance));
  out.push_back({"topology", Status::kInfo,
                 fmt::format("{} GPU(s) and {} RDMA device(s) on NUMA node(s) {}; GPU-to-RDMA-device pairs: {} "
                             "(fb_doctor --topology prints the matrix)",
                             gpus, m.devices.size() - gpus, join(std::vector<std::string>(numa.begin(), numa.end())),
                             join(counts)),
                 ""});
}

nlohmann::json to_json(const TopologyMatrix& m) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : m.devices)
    devices.push_back({{"name", d.name}, {"pci", d.bdf}, {"numa", d.numa}, {"gpu", d.gpu}});
  return {{"devices", devices}, {"matrix", m.cells}};
}

TopologyMatrix topology_from_json(const nlohmann::json& j) {
  TopologyMatrix m;
  if (!j.is_object()) return m;
  for (const auto& d : j.value("devices", nlohmann::json::array()))
    m.devices.push_back({d.value("name", std::string()), d.value("pci", std::string()), d.value("numa", std::string()),
                         d.value("gpu", false)});
  m.cells = j.value("matrix", std::vector<std::vector<std::string>>{});
  if (m.cells.size() != m.devices.size()) m = {};  // not a matrix of these devices
  for (const auto& row : m.cells)
    if (row.size() != m.devices.size()) return {};
  return m;
}

}  // namespace fabricbench::doctor
