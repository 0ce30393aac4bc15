// SPDX-License-Identifier: Apache-2.0
#include "doctor/pci_paths.hpp"

#include <algorithm>
#include <array>

#include "doctor/words.hpp"

namespace fabricbench::doctor {

std::vector<std::string> pci_chain(const std::string& path) {
  std::vector<std::string> chain;
  for (const std::string& part : split(path, '/'))
    if (part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.') chain.push_back(part);
  return chain;
}

std::string root_complex(const std::string& path) {
  for (const std::string& part : split(path, '/'))
    if (part.starts_with("pci")) return part;
  return {};
}

std::string pci_distance(const Pci& a, const Pci& b) {
  if (root_complex(a.path) != root_complex(b.path)) return a.numa == b.numa ? "NODE" : "SYS";
  const auto ca = pci_chain(a.path), cb = pci_chain(b.path);
  std::size_t common = 0;
  while (common < ca.size() && common < cb.size() && ca[common] == cb[common]) ++common;
  if (common == 0) return "PHB";  // only the host bridge in common
  return common + 2 >= std::min(ca.size(), cb.size()) ? "PIX" : "PXB";
}

int distance_rank(const std::string& distance) {
  static constexpr std::array<const char*, 5> kOrder{"PIX", "PXB", "PHB", "NODE", "SYS"};
  for (std::size_t i = 0; i < kOrder.size(); ++i)
    if (distance == kOrder[i]) return static_cast<int>(i);
  return static_cast<int>(kOrder.size());
}

std::vector<std::string> nvidia_gpu_addresses(const SysTree& t) {
  std::vector<std::string> gpus;
  for (const std::string& bdf : t.list("/sys/bus/pci/devices")) {
    const std::string dir = "/sys/bus/pci/devices/" + bdf;
    const std::string cls = t.text(dir + "/class").value_or("");
    if (t.text(dir + "/vendor").value_or("") == "0x10de" && (cls.starts_with("0x0302") || cls.starts_with("0x0300")))
      gpus.push_back(bdf);
  }
  return gpus;
}

std::vector<Pci> gpu_functions(const SysTree& t) {
  std::vector<Pci> gpus;
  for (const std::string& bdf : nvidia_gpu_addresses(t)) {
    const std::string dir = "/sys/bus/pci/devices/" + bdf;
    gpus.push_back({bdf, t.resolve(dir), t.text(dir + "/numa_node").value_or("-1")});
  }
  return gpus;
}

std::vector<std::pair<std::string, Pci>> rdma_functions(const SysTree& t) {
  std::vector<std::pair<std::string, Pci>> devices;
  for (const std::string& dev : t.list("/sys/class/infiniband")) {
    const std::string device_link = "/sys/class/infiniband/" + dev + "/device";
    if (!t.exists(device_link)) continue;
    const std::string path = t.resolve(device_link);
    const auto chain = pci_chain(path);
    if (chain.empty()) continue;  // a software device's parent is a netdev, not a PCI function
    devices.push_back({dev, {chain.back(), path, t.text(device_link + "/numa_node").value_or("-1")}});
  }
  return devices;
}

}  // namespace fabricbench::doctor
