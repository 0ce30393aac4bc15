// SPDX-License-Identifier: Apache-2.0
// A throw-away sysfs/procfs tree for the doctor's tests, made in a temporary folder.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

namespace fs = std::filesystem;

/// A throw-away sysfs/procfs tree.
class Tree {
 public:
  Tree()
      : root_(fs::temp_directory_path() / ("doctor-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(root_);
  }
  ~Tree() { fs::remove_all(root_); }
  void file(const std::string& path, const std::string& content) {
    fs::create_directories((root_ / path.substr(1)).parent_path());
    std::ofstream(root_ / path.substr(1), std::ios::binary) << content;
  }
  void link(const std::string& path, const std::string& target) {
    fs::create_directories((root_ / path.substr(1)).parent_path());
    fs::create_directory_symlink(target, root_ / path.substr(1));
  }
  /// A PCI function at `device_path` (under /sys/devices), listed in /sys/bus/pci/devices.
  void pci(const std::string& device_path, const std::string& vendor, const std::string& cls, const std::string& numa,
           const std::string& config = "") {
    const std::string bdf = fs::path(device_path).filename();
    file(device_path + "/vendor", vendor + "\n");
    file(device_path + "/class", cls + "\n");
    file(device_path + "/numa_node", numa + "\n");
    if (!config.empty()) file(device_path + "/config", config);
    link("/sys/bus/pci/devices/" + bdf, "../../.." + device_path.substr(4));
  }
  void port(const std::string& hca, const std::string& state, const std::string& phys, const std::string& layer) {
    const std::string p = "/sys/class/infiniband/" + hca + "/ports/1";
    file(p + "/state", state + "\n");
    file(p + "/phys_state", phys + "\n");
    file(p + "/rate", "200 Gb/sec (4X HDR)\n");
    file(p + "/link_layer", layer + "\n");
  }
  /// PCIe link attributes of a PCI function: widths in lanes, speeds as sysfs writes them ("32.0 GT/s PCIe").
  void pcie(const std::string& device_path, int width, int max_width, const std::string& speed,
            const std::string& max_speed) {
    file(device_path + "/current_link_width", std::to_string(width) + "\n");
    file(device_path + "/max_link_width", std::to_string(max_width) + "\n");
    file(device_path + "/current_link_speed", speed + "\n");
    file(device_path + "/max_link_speed", max_speed + "\n");
  }
  /// A ConnectX function at `device_path` (under /sys/devices) that is RDMA device `name`, its port 1
  /// ACTIVE/LinkUp InfiniBand at `rate`.
  void hca(const std::string& name, const std::string& device_path, const std::string& rate = "400 Gb/sec (4X NDR)",
           const std::string& numa = "0") {
    pci(device_path, "0x15b3", "0x020700", numa);
    link("/sys/class/infiniband/" + name, "../.." + device_path.substr(4) + "/infiniband/" + name);
    link(device_path + "/infiniband/" + name + "/device", "../../../" + fs::path(device_path).filename().string());
    port(name, "4: ACTIVE", "5: LinkUp", "InfiniBand");
    file("/sys/class/infiniband/" + name + "/ports/1/rate", rate + "\n");
  }
  /// Error counters of `hca` port 1.
  void counters(const std::string& hca, const std::map<std::string, std::string>& values) {
    for (const auto& [name, value] : values)
      file("/sys/class/infiniband/" + hca + "/ports/1/counters/" + name, value + "\n");
  }
  SysTree tree() const { return SysTree(root_); }
  /// Where `path` (absolute, as on a live node) is on this machine.
  fs::path at(const std::string& path) const { return root_ / path.substr(1); }
  const fs::path& root() const { return root_; }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

}  // namespace fabricbench::doctor
