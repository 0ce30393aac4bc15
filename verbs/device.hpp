// SPDX-License-Identifier: Apache-2.0
// Opening an RDMA device the way perftest users expect: by name (-d), port (-i), GID index (-x,
// picked like perftest when absent), with the checks that turn a misconfigured node into one line.
#pragma once

#include <cstdint>
#include <string>

#include "verbs/resources.hpp"

namespace fabricbench::verbs {

struct PortInfo {
  std::uint8_t number = 1;
  ibv_port_attr attributes{};
  double line_rate_gbps = 0;  ///< speed x width, data rate as ibstat's "Rate"
  bool nominal_rate = false;  ///< software device (Soft-RoCE): the rate is not a wire speed
  bool ethernet = false;      ///< RoCE: needs a GID
};

/// An opened device: context, protection domain, the chosen port and GID.
struct Hca {
  std::string name;
  Context context;
  ProtectionDomain pd;
  PortInfo port;
  int gid_index = -1;
  ibv_gid gid{};
  ibv_device_attr attributes{};
};

/// Opens `name` (the first device when empty), checks that `port` is ACTIVE and picks the GID:
/// `gid_index` < 0 chooses like perftest (RoCE v2 with an IPv4-mapped address; none on IB).
/// Throws UsageError naming what is wrong: no device, unknown name (listing those present), port
/// not ACTIVE (state and phys_state as ibstat prints them), GID index out of range or empty.
Hca open_hca(const std::string& name, int port, int gid_index);

/// Throws UsageError when RLIMIT_MEMLOCK is below `bytes` (value and the fix).
void check_memlock(std::uint64_t bytes);

/// Gb/s of an active_speed code times an active_width code (as ibstat's Rate); 0 when unknown.
double line_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width);

/// "::ffff:127.0.0.1" style text of a GID.
std::string gid_text(const ibv_gid& gid);

/// ibstat's words for port states.
std::string port_state_name(ibv_port_state state);
std::string phys_state_name(std::uint8_t phys_state);

}  // namespace fabricbench::verbs
