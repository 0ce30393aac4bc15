// SPDX-License-Identifier: Apache-2.0
// sysfs and procfs read under a root folder: "/" on a live node, or a tree recorded from another
// machine (scripts/record-sysfs.sh) so the doctor's checks run in tests against real hardware
// layouts that the test machine does not have.
//
// fabricbench runs as root from prologs and cron, and a recorded tree may come from anyone, so
// every read is bounded and never blocks: only regular files are read (sysfs attributes and
// procfs files are regular), at most kMaxFileBytes of them; links are followed one component at a
// time and never out of a recorded tree. What is skipped is remembered (skipped()), never silent.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/utf8.hpp"

namespace fabricbench::doctor {

class SysTree {
 public:
  /// Longer files are skipped: a sysfs attribute is at most a page, PCI config space 4 KiB.
  static constexpr std::size_t kMaxFileBytes = 1024 * 1024;
  /// A folder's entries past this many are not listed, and said so: a PCI bus has a few hundred
  /// functions, a node with SR-IOV's virtual functions a few thousand. The checks pair devices
  /// with each other, so a recorded tree of 20,000 took 35 s (and 100,000 over a minute).
  static constexpr std::size_t kMaxFolderEntries = 4096;

  explicit SysTree(std::filesystem::path root);

  /// Contents of `path` (absolute, as on a live node) with trailing whitespace trimmed; nullopt
  /// when it is absent or skipped.
  std::optional<std::string> text(const std::string& path) const;
  /// Raw bytes (PCI config space).
  std::optional<std::string> bytes(const std::string& path) const;
  /// Entry names of a folder, sorted; empty when it does not exist.
  std::vector<std::string> list(const std::string& path) const;
  bool exists(const std::string& path) const;
  /// The canonical location of `path` inside the tree, as a path of the live node (links such as
  /// /sys/bus/pci/devices/0000:19:00.0 resolved to /sys/devices/pci0000:00/.../0000:19:00.0).
  std::string resolve(const std::string& path) const;

  /// What was not read, one "PATH: why" each, sorted: a FIFO, socket or device, a file over
  /// kMaxFileBytes, a link out of a recorded tree.
  std::vector<std::string> skipped() const;
  /// Why `path` was skipped ("a FIFO, not a regular file"); "" when it was not.
  std::string skip_reason(const std::string& path) const;

  const std::filesystem::path& root() const { return root_; }
  /// The root is this machine's "/": absolute links are followed, not refused.
  bool live() const { return live_; }

 private:
  struct Located;
  Located locate(const std::string& path) const;
  void skip(const std::string& path, const std::string& why) const;

  std::filesystem::path root_;
  bool live_ = false;
  mutable std::map<std::string, std::string> skipped_;  // path -> why; reads are const
};

}  // namespace fabricbench::doctor
