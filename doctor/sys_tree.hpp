// SPDX-License-Identifier: Apache-2.0
// sysfs and procfs read under a root folder: "/" on a live node, or a tree recorded from another
// machine (scripts/record-sysfs.sh) so the doctor's checks run in tests against real hardware
// layouts that the test machine does not have.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fabricbench::doctor {

class SysTree {
 public:
  explicit SysTree(std::filesystem::path root) : root_(std::move(root)) {}

  /// Contents of `path` (absolute, as on a live node) with trailing whitespace trimmed.
  std::optional<std::string> text(const std::string& path) const;
  /// Raw bytes (PCI config space).
  std::optional<std::string> bytes(const std::string& path) const;
  /// Entry names of a folder, sorted; empty when it does not exist.
  std::vector<std::string> list(const std::string& path) const;
  bool exists(const std::string& path) const;
  /// The canonical location of `path` inside the tree, as a path of the live node (links such as
  /// /sys/bus/pci/devices/0000:19:00.0 resolved to /sys/devices/pci0000:00/.../0000:19:00.0).
  std::string resolve(const std::string& path) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path inside(const std::string& path) const;
  std::filesystem::path root_;
};

}  // namespace fabricbench::doctor
