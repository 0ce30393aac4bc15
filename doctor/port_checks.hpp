// SPDX-License-Identifier: Apache-2.0
// InfiniBand / RoCE port health beyond its state: a port whose rate is below what the node's other
// ports (or other nodes' ports) show, error counters that rise between two readings a known
// interval apart (symbol errors, link recoveries, links downed, receive errors...), and firmware
// versions that differ between the node's devices of one kind.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/finding.hpp"
#include "doctor/sys_tree.hpp"

namespace fabricbench::doctor {

struct HealthRules;
struct HealthCheck;

/// One RDMA port as sysfs shows it (the words ibstat prints).
struct RdmaPort {
  std::string device, port;
  std::string state, phys_state, rate, link_layer;  ///< "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand"
  bool active() const { return state.find("ACTIVE") != std::string::npos; }
  bool link_up() const { return phys_state.find("LinkUp") != std::string::npos; }
  /// The rate's Gb/s ("400 Gb/sec (4X NDR)" -> 400); 0 when unreadable (not "N Gb/sec", N above 10000).
  double gbps() const;
  /// "mlx5_0 port 1"
  std::string name() const { return device + " port " + port; }
};
/// Every port of every device under /sys/class/infiniband, by device then port.
std::vector<RdmaPort> rdma_ports(const SysTree& tree);

/// The error counters judged, each with its width in bits in the PortCounters attribute (a
/// counter stops at 2^bits - 1: saturated, it can show no new error). Congestion (port_xmit_discards)
/// and partition checks (constraint errors) are not link faults and are left out.
struct ErrorCounter {
  const char* name;
  int bits;
};
const std::vector<ErrorCounter>& error_counters();

/// The error counters of every port at one moment: "mlx5_0 port 1" -> counter -> value. Ports
/// without a counters folder (a software device) are absent.
using PortCounters = std::map<std::string, std::map<std::string, double>>;
PortCounters read_port_counters(const SysTree& tree);

/// Two readings of the counters `seconds` apart, or one (`after` unset: a rate cannot be given).
struct CounterWindow {
  PortCounters before;
  std::optional<PortCounters> after;
  double seconds = 0;
  std::string how;  ///< "read 2.0 s apart", "recorded 5 s apart in ROOT and ROOT.later", why only one reading
  std::vector<std::string> skipped;  ///< what ROOT.later would not give ("PATH: why"), as SysTree::skipped
};

/// One port's errors over the window.
struct PortErrorRate {
  std::string port;   ///< "mlx5_0 port 1"
  double errors = 0;  ///< added over the window, every error counter together
  double per_hour = 0;
  std::vector<std::string> rising;     ///< "symbol_error 12 -> 40"
  std::vector<std::string> saturated;  ///< "symbol_error at 65535"
  /// Counters no rate can be taken of: read in one reading only (unreadable, not a count), or lower
  /// in the second (cleared, or not the counter it claims to be): "symbol_error 1000 -> 10".
  std::vector<std::string> unjudged;
};
/// The rates of every port with counters in both readings; empty without a second reading.
std::vector<PortErrorRate> error_rates(const CounterWindow& window);

/// "link-errors" findings: WARN per port with a rising or saturated counter, one PASS for the
/// steady ones, INFO with the totals when there is only one reading.
void check_link_errors(const CounterWindow& window, const std::vector<PortErrorRate>& rates, std::vector<Finding>& out);

/// "port-rates": WARN for an active port below the fastest of the node's ports of its link layer.
void check_port_rates(const std::vector<RdmaPort>& ports, std::vector<Finding>& out);

/// "hca-firmware": each device kind's firmware; WARN when devices of one kind differ. Sets
/// `facts["hca firmware"]` ("MT4129 28.39.1002") for the comparison across nodes.
void check_firmware(const SysTree& tree, std::vector<Finding>& out, std::map<std::string, std::string>& facts);

/// Across nodes: each node's active ports (by host) against the fastest any node shows per link
/// layer: "port-rates" WARN naming host and port, or one PASS.
void compare_port_rates(const std::map<std::string, std::vector<RdmaPort>>& ports_by_host, std::vector<Finding>& out);

/// fb_health's max_link_errors_per_hour ("link-errors"): FAIL per port above it or saturated, and
/// when no rate could be made (one reading, no counters).
void judge_link_error_rule(const CounterWindow& window, const HealthRules& rules, std::vector<HealthCheck>& checks);

}  // namespace fabricbench::doctor
