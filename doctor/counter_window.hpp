// SPDX-License-Identifier: Apache-2.0
// The two readings of the RDMA ports' error counters that make a rate. On the live node: one now
// and one once the interval has passed (fb_health lets its measurements run in between). On a
// recorded tree: ROOT holds the first reading and ROOT.later the second, with the seconds between
// them in ROOT.later/interval_seconds (scripts/record-sysfs.sh OUT SECONDS writes both).
#pragma once

#include <chrono>
#include <string>

#include "doctor/port_checks.hpp"
#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

class CounterWindowReader {
 public:
  /// Takes the first reading. `root`: the folder `tree` reads (its ".later" sibling holds a
  /// recorded second reading). `interval_seconds`: on the live node, the time between the
  /// readings; 0 for one reading.
  CounterWindowReader(const SysTree& tree, std::string root, double interval_seconds);

  /// The window: on the live node the second reading once the interval has passed since the first
  /// (sleeping what is left of it; no wait when no port has counters); on a recorded tree
  /// ROOT.later, or one reading with why when there is none.
  CounterWindow finish() const;

 private:
  const SysTree& tree_;
  std::string root_;
  double interval_seconds_;
  PortCounters first_;
  std::chrono::steady_clock::time_point first_at_;
};

}  // namespace fabricbench::doctor
