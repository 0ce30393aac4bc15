// SPDX-License-Identifier: Apache-2.0
#include "doctor/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/kernel_checks.hpp"
#include "doctor/pcie_checks.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {
namespace {

std::uint32_t le32(const std::string& bytes, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3])) << 24;
}

/// "NCCL_IB_HCA=^=mlx5_0:1,mlx5_1": include/exclude, exact/prefix, names without ports.
struct DeviceFilter {
  bool exclude = false, exact = false;
  std::vector<std::string> names;
};

DeviceFilter parse_filter(std::string text) {
  DeviceFilter f;
  if (!text.empty() && text[0] == '^') f.exclude = true, text.erase(0, 1);
  if (!text.empty() && text[0] == '=') f.exact = true, text.erase(0, 1);
  for (const std::string& item : split(text, ',')) f.names.push_back(item.substr(0, item.find(':')));
  return f;
}

bool matches(const DeviceFilter& f, const std::string& name, const std::string& present) {
  return f.exact ? name == present : present.starts_with(name);
}

void check_filter(std::vector<Finding>& out, const std::map<std::string, std::string>& env, const char* variable,
                  const std::vector<std::string>& present, const char* what) {
  const auto found = env.find(variable);
  if (found == env.end()) return;
  const DeviceFilter f = parse_filter(found->second);
  std::vector<std::string> missing;
  for (const std::string& name : f.names)
    if (std::none_of(present.begin(), present.end(), [&](const std::string& p) { return matches(f, name, p); }))
      missing.push_back(name);
  const std::string list = present.empty() ? "none" : join(present);
  if (!f.exclude && !missing.empty())
    out.push_back({"nccl-env", Status::kFail,
                   fmt::format("{}={} names {} {} this node does not have (present: {})", variable, found->second, what,
                               join(missing), list),
                   fmt::format("fix {} or unset it; NCCL would fall back (IB: to sockets)", variable)});
  else
    out.push_back({"nccl-env", f.exclude && !missing.empty() ? Status::kWarn : Status::kPass,
                   fmt::format("{}={}: {} present: {}", variable, found->second, what, list),
                   f.exclude && !missing.empty() ? fmt::format("excluding {} that do not exist", join(missing)) : ""});
}

void check_gpus(const SysTree& t, NodeReport& r, const std::vector<Pci>& gpus) {
  std::string driver;
  if (auto version = t.text("/proc/driver/nvidia/version")) {
    // "... Kernel Module  580.159.04 ..." or "... Open Kernel Module for x86_64  580.159.04 ...":
    // the first word after "Module" shaped like a version.
    std::istringstream words(version->substr(0, version->find('\n')));
    std::string word;
    bool after_module = false;
    while (words >> word && driver.empty()) {
      if (word == "Module") after_module = true;
      const bool versionish = std::count(word.begin(), word.end(), '.') >= 1 &&
                              word.find_first_not_of("0123456789.") == std::string::npos && std::isdigit(word[0]);
      if (after_module && versionish) driver = word;
    }
  }
  if (!driver.empty()) r.facts["nvidia driver"] = driver;
  std::vector<std::string> names;
  for (const Pci& g : gpus) names.push_back(g.bdf);
  if (gpus.empty())
    r.findings.push_back({"gpus", Status::kWarn, "no NVIDIA GPU on the PCI bus",
                          "a GPU node should list its GPUs in lspci -d 10de:; check the BIOS / passthrough"});
  else if (driver.empty())
    r.findings.push_back({"gpus", Status::kFail,
                          fmt::format("{} GPU(s) ({}) but no NVIDIA driver loaded", gpus.size(), join(names)),
                          "install / load the driver (modprobe nvidia; nvidia-smi)"});
  else
    r.findings.push_back(
        {"gpus", Status::kPass, fmt::format("{} GPU(s): {}; driver {}", gpus.size(), join(names), driver), ""});
}

// RoCE: NCCL needs a RoCE v2 GID with an IPv4 address (or NCCL_IB_GID_INDEX naming one).
void check_roce_gids(const SysTree& t, const RdmaPort& found, const std::map<std::string, std::string>& env,
                     std::vector<Finding>& out) {
  const std::string p = "/sys/class/infiniband/" + found.device + "/ports/" + found.port;
  const std::string &dev = found.device, &port = found.port;
  std::vector<std::string> v2;
  for (const std::string& index : t.list(p + "/gids")) {
    const std::string gid = t.text(p + "/gids/" + index).value_or("");
    const std::string type = t.text(p + "/gid_attrs/types/" + index).value_or("");
    if (gid.empty() || gid.find_first_not_of("0:") == std::string::npos) continue;
    if (type.find("v2") != std::string::npos && gid.find("0000:0000:0000:0000:0000:ffff:") == 0) v2.push_back(index);
  }
  if (v2.empty())
    out.push_back({"roce-gid", Status::kFail, fmt::format("{} port {}: no RoCE v2 GID with an IPv4 address", dev, port),
                   "give the port's netdev an IPv4 address (show_gids lists the table)"});
  else
    out.push_back(
        {"roce-gid", Status::kPass, fmt::format("{} port {}: RoCE v2 IPv4 GID index(es) {}", dev, port, join(v2)), ""});
  if (auto wanted = env.find("NCCL_IB_GID_INDEX");
      wanted != env.end() && std::find(v2.begin(), v2.end(), wanted->second) == v2.end())
    out.push_back(
        {"nccl-env", Status::kFail,
         fmt::format("NCCL_IB_GID_INDEX={} is not a RoCE v2 IPv4 GID of {} port {}", wanted->second, dev, port),
         v2.empty() ? "fix the GID table first" : fmt::format("use one of {} or unset it", join(v2))});
}

void check_rdma(const SysTree& t, const std::map<std::string, std::string>& env, const std::vector<RdmaPort>& ports,
                std::vector<Finding>& out) {
  if (t.list("/sys/class/infiniband").empty()) {
    out.push_back({"rdma", Status::kWarn, "no RDMA device (/sys/class/infiniband is empty)",
                   "load the HCA driver (mlx5_ib) and check ibstat; without it NCCL runs NET/Socket between nodes"});
    return;
  }
  for (const RdmaPort& found : ports) {
    const std::string &state = found.state, &phys = found.phys_state, &rate = found.rate, &layer = found.link_layer;
    const bool up = found.link_up();
    if (found.active() && up && !(found.gbps() > 0))
      out.push_back({"rdma-port", Status::kWarn,
                     fmt::format("{}: {}, {}, {}: the rate '{}' is not a link rate, so its speed is not known",
                                 found.name(), state, phys, layer, rate),
                     "check ibstat's Rate for this port; the driver gave no usable figure"});
    else if (found.active() && up)
      out.push_back(
          {"rdma-port", Status::kPass, fmt::format("{}: {}, {}, {}, {}", found.name(), state, phys, rate, layer), ""});
    else
      out.push_back({"rdma-port", Status::kFail, fmt::format("{}: {}, {} ({})", found.name(), state, phys, layer),
                     up ? "link up but not ACTIVE: InfiniBand needs a subnet manager (opensm / the switch's SM)"
                        : "no link: check the cable, the switch port, ibstat / ibportstate"});
    if (layer == "Ethernet") check_roce_gids(t, found, env, out);
  }
}

/// "6.8.0-45-generic" -> {6, 8}; {0, 0} for a release that does not start that way.
std::pair<double, double> kernel_version(const std::string& release) {
  const auto number_at = [&](std::size_t from) {
    const std::size_t end = std::min(release.find_first_not_of("0123456789", from), release.size());
    return parse_number(release.substr(from, end - from), "kernel release", NumberRange::between(0, 1000));
  };
  try {
    const std::size_t dot = release.find('.');
    return {number_at(0), dot == std::string::npos ? 0 : number_at(dot + 1)};
  } catch (const UsageError&) {
    return {0, 0};
  }
}

void check_gdr(const SysTree& t, NodeReport& r, bool gpus, bool hcas) {
  const std::string kernel = t.text("/proc/sys/kernel/osrelease").value_or("");
  if (!kernel.empty()) r.facts["kernel"] = kernel;
  if (!gpus || !hcas) {
    r.findings.push_back(
        {"gdr", Status::kInfo, "GPUDirect RDMA not applicable (needs both GPUs and an RDMA device)", ""});
    return;
  }
  if (t.exists("/sys/module/nvidia_peermem")) {
    r.findings.push_back({"gdr", Status::kPass, "nvidia_peermem loaded: ibv_reg_mr accepts GPU memory", ""});
    return;
  }
  const auto [major, minor] = kernel_version(kernel);
  if (major > 5 || (major == 5 && minor >= 12))
    r.findings.push_back(
        {"gdr", Status::kWarn, fmt::format("nvidia_peermem not loaded; kernel {} allows dma-buf", kernel),
         "modprobe nvidia-peermem, or rely on dma-buf (NCCL 2.13+; open kernel modules on some GPUs)"});
  else
    r.findings.push_back(
        {"gdr", Status::kFail, fmt::format("nvidia_peermem not loaded and kernel {} has no dma-buf for RDMA", kernel),
         "modprobe nvidia-peermem (MLNX_OFED or the inbox module), else NCCL stages GPU data through host memory"});
}

void check_affinity(const SysTree& t, NodeReport& r, const std::vector<Pci>& gpus,
                    const std::vector<std::pair<std::string, Pci>>& hcas) {
  if (gpus.empty() || hcas.empty()) return;
  std::set<std::string> bridges;
  for (const Pci& g : gpus) {
    std::string best_name, best = "SYS";
    const Pci* best_hca = nullptr;
    for (const auto& [name, hca] : hcas) {
      const std::string d = pci_distance(g, hca);
      if (!best_hca || distance_rank(d) < distance_rank(best)) {
        best = d, best_name = name, best_hca = &hca;
      }
    }
    const bool close = best == "PIX" || best == "PXB";
    r.findings.push_back({"affinity", close ? Status::kPass : Status::kWarn,
                          fmt::format("GPU {} (NUMA {}) nearest RDMA device {} (NUMA {}): {}", g.bdf, g.numa, best_name,
                                      best_hca->numa, best),
                          close ? ""
                                : "no NIC behind the GPU's PCIe switch: NCCL's default NCCL_NET_GDR_LEVEL (PXB) turns "
                                  "GDR off here; check the slot layout or raise NCCL_NET_GDR_LEVEL knowingly"});
    // Bridges between the two: where ACS would turn peer-to-peer traffic around.
    for (const std::string& b : pci_chain(g.path)) bridges.insert(b);
    for (const std::string& b : pci_chain(best_hca->path)) bridges.insert(b);
    bridges.erase(g.bdf);
    bridges.erase(best_hca->bdf);
  }
  std::vector<std::string> redirecting;
  bool unreadable = false;
  for (const std::string& b : bridges) {
    const int control = acs_control(t.bytes("/sys/bus/pci/devices/" + b + "/config").value_or(""));
    if (control == -2) unreadable = true;
    if (control > 0 && (control & 0x0c)) redirecting.push_back(fmt::format("{} (ACSCtl {:#06x})", b, control));
  }
  if (!redirecting.empty())
    r.findings.push_back({"acs", Status::kFail,
                          fmt::format("PCIe ACS redirects peer-to-peer traffic on {}", join(redirecting)),
                          "disable ACS on those bridges (BIOS, or setpci ECAP_ACS+6.w=0 at boot): GDR traffic now "
                          "crosses the root complex"});
  else if (unreadable)
    r.findings.push_back(
        {"acs", Status::kInfo, "PCIe extended config space not readable (run fb_doctor as root to check ACS)", ""});
  else if (!bridges.empty())
    r.findings.push_back({"acs", Status::kPass,
                          fmt::format("no ACS redirection on the {} bridge(s) between GPUs and NICs", bridges.size()),
                          ""});
}

void check_iommu(const SysTree& t, NodeReport& r) {
  const bool enabled = !t.list("/sys/class/iommu").empty();
  const std::optional<std::string> cmdline = t.text("/proc/cmdline");
  const bool passthrough = cmdline && cmdline->find("iommu=pt") != std::string::npos;
  // scripts/record-sysfs.sh records the IOMMUs with the command line; a tree without the one says
  // nothing of the other (an empty --root is no node with its IOMMU off).
  if (!enabled && !cmdline && !t.live())
    r.findings.push_back({"iommu", Status::kInfo, "/proc/cmdline is not in the recorded tree: IOMMU mode unknown", ""});
  else if (!enabled)
    r.findings.push_back({"iommu", Status::kPass, "IOMMU off: DMA goes untranslated", ""});
  else if (passthrough)
    r.findings.push_back({"iommu", Status::kPass, "IOMMU on in passthrough mode (iommu=pt)", ""});
  else
    r.findings.push_back({"iommu", Status::kWarn, "IOMMU on in translated mode: every RDMA / GDR access is translated",
                          "add iommu=pt to the kernel command line (or disable the IOMMU) on GPU/RDMA nodes"});
}

}  // namespace

const char* status_name(Status status) {
  switch (status) {
    case Status::kPass: return "PASS";
    case Status::kInfo: return "INFO";
    case Status::kWarn: return "WARN";
    case Status::kFail: return "FAIL";
  }
  return "?";
}

int acs_control(const std::string& config) {
  if (config.size() < 0x104) return -2;
  std::size_t offset = 0x100;
  for (int hops = 0; hops < 64 && offset >= 0x100 && offset + 8 <= config.size(); ++hops) {
    const std::uint32_t header = le32(config, offset);
    if (header == 0 || header == 0xffffffff) return -1;
    if ((header & 0xffff) == 0x000d)
      return static_cast<int>(static_cast<unsigned char>(config[offset + 6]) |
                              static_cast<unsigned char>(config[offset + 7]) << 8);
    offset = header >> 20;
    if (offset == 0) return -1;
  }
  return -1;
}

NodeReport inspect_node(const SysTree& tree, const std::map<std::string, std::string>& environment,
                        const std::string& host, const std::string& nccl_version, const NodeContext& context) {
  NodeReport r;
  r.host = host;
  if (!nccl_version.empty()) r.facts["nccl"] = nccl_version;
  const std::vector<Pci> gpus = gpu_functions(tree);
  const auto hcas = rdma_functions(tree);
  r.ports = rdma_ports(tree);
  const bool rdma_present = !tree.list("/sys/class/infiniband").empty();
  check_gpus(tree, r, gpus);
  check_rdma(tree, environment, r.ports, r.findings);
  check_port_rates(r.ports, r.findings);
  r.counters = context.counters ? *context.counters
                                : CounterWindow{read_port_counters(tree), {}, 0, "one reading asked for", {}};
  r.link_errors = error_rates(r.counters);
  check_link_errors(r.counters, r.link_errors, r.findings);
  check_firmware(tree, r.findings, r.facts);
  check_gdr(tree, r, !gpus.empty(), rdma_present);
  check_kernel_limits(tree, rdma_present || context.rdma_required, context.vantage, r.findings);
  check_affinity(tree, r, gpus, hcas);
  r.topology = topology_matrix(tree);
  summarize_topology(r.topology, r.findings);
  check_pcie_links(pcie_links(tree), r.findings);
  check_iommu(tree, r);
  check_filter(r.findings, environment, "NCCL_IB_HCA", tree.list("/sys/class/infiniband"), "RDMA device(s)");
  check_filter(r.findings, environment, "NCCL_SOCKET_IFNAME", tree.list("/sys/class/net"), "interface(s)");
  std::vector<std::string> skipped = tree.skipped();
  skipped.insert(skipped.end(), r.counters.skipped.begin(), r.counters.skipped.end());
  for (const std::string& path : skipped)
    r.findings.push_back({"skipped-file", Status::kWarn, "not read: " + path,
                          "sysfs and procfs hold only small regular files, folders and links within: re-record the "
                          "tree (scripts/record-sysfs.sh) or find what put this there"});
  return r;
}

NodeReport inspect_node(const SysTree& tree, const std::map<std::string, std::string>& environment,
                        const std::string& host, const std::string& nccl_version, bool rdma_required) {
  NodeContext context;
  context.rdma_required = rdma_required;
  return inspect_node(tree, environment, host, nccl_version, context);
}

std::vector<Finding> compare_nodes(const std::vector<NodeReport>& nodes) {
  std::vector<Finding> out;
  if (nodes.size() < 2) return out;
  std::set<std::string> items;
  for (const NodeReport& n : nodes)
    for (const auto& [item, value] : n.facts) items.insert(item);
  for (const std::string& item : items) {
    std::map<std::string, std::vector<std::string>> by_value;
    for (const NodeReport& n : nodes) {
      const auto v = n.facts.find(item);
      by_value[v == n.facts.end() ? "(none)" : v->second].push_back(n.host);
    }
    if (by_value.size() == 1) {
      out.push_back({"same-" + item, Status::kPass,
                     fmt::format("{} {} on all {} nodes", item, by_value.begin()->first, nodes.size()), ""});
      continue;
    }
    std::string detail;
    for (const auto& [value, hosts] : by_value)
      detail += fmt::format("{}{} on {}", detail.empty() ? "" : "; ", value, join(hosts));
    // A kernel or HCA firmware that differs is worth knowing; a driver or NCCL that differs breaks jobs.
    const bool firmware = item == "hca firmware";
    out.push_back({"same-" + item, item == "kernel" || firmware ? Status::kWarn : Status::kFail,
                   fmt::format("{} differs: {}", item, detail),
                   firmware ? "flash one firmware on every node's HCAs (mlxfwmanager, mstflint): versions differ in "
                              "features and fixes NCCL meets"
                            : "install the same version on every node: mixed versions break or slow NCCL"});
  }
  std::map<std::string, std::vector<RdmaPort>> ports_by_host;
  for (const NodeReport& n : nodes) ports_by_host[n.host] = n.ports;
  compare_port_rates(ports_by_host, out);
  return out;
}

nlohmann::json to_json(const NodeReport& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : r.findings)
    findings.push_back(
        {{"check", f.check}, {"status", status_name(f.status)}, {"detail", f.detail}, {"remedy", f.remedy}});
  nlohmann::json ports = nlohmann::json::array();
  for (const RdmaPort& p : r.ports)
    ports.push_back({{"device", p.device},
                     {"port", p.port},
                     {"state", p.state},
                     {"phys_state", p.phys_state},
                     {"rate", p.rate},
                     {"link_layer", p.link_layer}});
  nlohmann::json errors = nlohmann::json::array();
  for (const PortErrorRate& e : r.link_errors)
    errors.push_back({{"port", e.port},
                      {"errors", e.errors},
                      {"per_hour", e.per_hour},
                      {"rising", e.rising},
                      {"saturated", e.saturated},
                      {"seconds", r.counters.seconds}});
  return {{"host", r.host}, {"facts", r.facts},      {"findings", findings},
          {"ports", ports}, {"link_errors", errors}, {"topology", to_json(r.topology)}};
}

NodeReport report_from_json(const nlohmann::json& j) {
  NodeReport r;
  r.host = j.value("host", std::string());
  r.facts = j.value("facts", std::map<std::string, std::string>{});
  for (const auto& f : j.value("findings", nlohmann::json::array())) {
    const std::string s = f.value("status", std::string());
    const Status status = s == "PASS"   ? Status::kPass
                          : s == "WARN" ? Status::kWarn
                          : s == "FAIL" ? Status::kFail
                                        : Status::kInfo;
    r.findings.push_back(
        {f.value("check", std::string()), status, f.value("detail", std::string()), f.value("remedy", std::string())});
  }
  for (const auto& p : j.value("ports", nlohmann::json::array()))
    r.ports.push_back({p.value("device", std::string()), p.value("port", std::string()),
                       p.value("state", std::string()), p.value("phys_state", std::string()),
                       p.value("rate", std::string()), p.value("link_layer", std::string())});
  r.topology = topology_from_json(j.value("topology", nlohmann::json::object()));
  return r;
}

}  // namespace fabricbench::doctor
