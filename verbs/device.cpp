// SPDX-License-Identifier: Apache-2.0
#include "verbs/device.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <fstream>
#include <vector>

namespace fabricbench::verbs {

double line_rate_gbps(std::uint32_t active_speed, std::uint8_t active_width) {
  // Data rate per lane as ibstat reports it (SDR 2.5 ... NDR 100, XDR 200 Gb/s).
  double lane = 0;
  switch (active_speed) {
    case 1: lane = 2.5; break;
    case 2: lane = 5; break;
    case 4: lane = 10; break;
    case 8: lane = 10; break;  // FDR10
    case 16: lane = 14; break;
    case 32: lane = 25; break;
    case 64: lane = 50; break;
    case 128: lane = 100; break;
    case 256: lane = 200; break;
    default: return 0;
  }
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return 0;
  }
  return lane * lanes;
}

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

std::string port_state_name(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_DOWN: return "Down";
    case IBV_PORT_INIT: return "Initializing";
    case IBV_PORT_ARMED: return "Armed";
    case IBV_PORT_ACTIVE: return "Active";
    case IBV_PORT_ACTIVE_DEFER: return "Active-Defer";
    default: return fmt::format("state {}", static_cast<int>(state));
  }
}

std::string phys_state_name(std::uint8_t phys_state) {
  switch (phys_state) {
    case 1: return "Sleep";
    case 2: return "Polling";
    case 3: return "Disabled";
    case 4: return "PortConfigurationTraining";
    case 5: return "LinkUp";
    case 6: return "LinkErrorRecovery";
    case 7: return "Phy Test";
    default: return fmt::format("phys_state {}", phys_state);
  }
}

namespace {

bool is_ipv4_mapped(const ibv_gid& gid) {
  static constexpr unsigned char kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

bool is_empty(const ibv_gid& gid) {
  static constexpr unsigned char kZero[16] = {};
  return std::memcmp(gid.raw, kZero, sizeof kZero) == 0;
}

// perftest's choice on RoCE: a RoCE v2 GID with an IPv4-mapped address, else the first usable one.
int pick_gid(ibv_context* context, const PortInfo& port, const std::string& device) {
  int fallback = -1;
  for (int index = 0; index < port.attributes.gid_tbl_len; ++index) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(context, port.number, static_cast<std::uint32_t>(index), &entry, 0) != 0) continue;
    if (is_empty(entry.gid)) continue;
    if (entry.gid_type == IBV_GID_TYPE_ROCE_V2 && is_ipv4_mapped(entry.gid)) return index;
    if (fallback < 0) fallback = index;
  }
  if (fallback < 0)
    throw UsageError(
        fmt::format("{} port {}: the GID table is empty (no IP address on the RoCE netdev?); give -x or "
                    "configure an address",
                    device, port.number));
  return fallback;
}

}  // namespace

Hca open_hca(const std::string& name, int port, int gid_index) {
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list || count == 0)
    throw UsageError(
        "no RDMA device: ibv_get_device_list found none (/sys/class/infiniband is empty; is the HCA driver or rdma_rxe "
        "loaded?). Without hardware, try scripts/rxe-vm.sh, a Soft-RoCE VM");
  ibv_device* chosen = nullptr;
  std::string names;
  for (int i = 0; i < count; ++i) {
    const std::string candidate = ibv_get_device_name(list.get()[i]);
    names += (names.empty() ? "" : ", ") + candidate;
    if (name.empty() ? i == 0 : candidate == name) chosen = list.get()[i];
  }
  if (!chosen) throw UsageError(fmt::format("-d/--ib-dev: no RDMA device named '{}'; present: {}", name, names));

  Hca hca;
  hca.name = ibv_get_device_name(chosen);
  hca.context.reset(ibv_open_device(chosen));
  if (!hca.context) throw_errno("ibv_open_device(" + hca.name + ")");
  check_rc(ibv_query_device(hca.context.get(), &hca.attributes), "ibv_query_device(" + hca.name + ")");
  if (port < 1 || port > hca.attributes.phys_port_cnt)
    throw UsageError(fmt::format("-i/--ib-port {}: {} has port(s) 1..{}", port, hca.name,
                                 static_cast<int>(hca.attributes.phys_port_cnt)));
  hca.port.number = static_cast<std::uint8_t>(port);
  check_rc(ibv_query_port(hca.context.get(), hca.port.number, &hca.port.attributes),
           fmt::format("ibv_query_port({} port {})", hca.name, port));
  const ibv_port_attr& a = hca.port.attributes;
  if (a.state != IBV_PORT_ACTIVE)
    throw UsageError(
        fmt::format("{} port {} is not ACTIVE: State: {}, Physical state: {} (as ibstat shows it); check "
                    "the cable, the switch and the subnet manager (opensm) for IB",
                    hca.name, port, port_state_name(a.state), phys_state_name(a.phys_state)));
  hca.port.ethernet = a.link_layer == IBV_LINK_LAYER_ETHERNET;
  hca.port.line_rate_gbps = line_rate_gbps(a.active_speed, a.active_width);
  hca.port.nominal_rate = hca.name.rfind("rxe", 0) == 0 || hca.name.rfind("siw", 0) == 0 ||
                          hca.attributes.vendor_id == 0xffffff;  // software providers

  if (gid_index >= 0) {
    if (gid_index >= a.gid_tbl_len)
      throw UsageError(fmt::format("-x/--gid-index {}: {} port {} has GID indices 0..{}", gid_index, hca.name, port,
                                   a.gid_tbl_len - 1));
    hca.gid_index = gid_index;
  } else if (hca.port.ethernet) {
    hca.gid_index = pick_gid(hca.context.get(), hca.port, hca.name);
  }
  if (hca.gid_index >= 0) {
    check_rc(ibv_query_gid(hca.context.get(), hca.port.number, hca.gid_index, &hca.gid), "ibv_query_gid");
    if (is_empty(hca.gid))
      throw UsageError(
          fmt::format("-x/--gid-index {}: that GID of {} port {} is empty; `show_gids` lists the valid ones",
                      hca.gid_index, hca.name, port));
  }
  hca.pd.reset(ibv_alloc_pd(hca.context.get()));
  if (!hca.pd) throw_errno("ibv_alloc_pd(" + hca.name + ")");
  return hca;
}

namespace {
// CAP_IPC_LOCK (root's default) lifts RLIMIT_MEMLOCK for registrations: read it from procfs, as
// libcap would, to avoid refusing what would work.
bool can_lock_any_amount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("CapEff:", 0) == 0) {
      constexpr unsigned kCapIpcLock = 14;
      return (std::stoull(line.substr(7), nullptr, 16) >> kCapIpcLock) & 1u;
    }
  return false;
}
}  // namespace

void check_memlock(std::uint64_t bytes) {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  if (can_lock_any_amount()) return;
  if (limit.rlim_cur >= bytes) return;
  throw UsageError(
      fmt::format("the memlock limit is {} KiB but registering the buffers needs {} KiB: run `ulimit -l "
                  "unlimited` (or set memlock unlimited in /etc/security/limits.conf / the Slurm "
                  "PropagateResourceLimits)",
                  limit.rlim_cur / 1024, (bytes + 1023) / 1024));
}

}  // namespace fabricbench::verbs
