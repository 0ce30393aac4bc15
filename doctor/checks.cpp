// SPDX-License-Identifier: Apache-2.0
#include "doctor/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/numbers.hpp"

namespace fabricbench::doctor {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

struct Pci {
  std::string bdf;   ///< 0000:19:00.0
  std::string path;  ///< /sys/devices/pci0000:17/0000:17:00.0/.../0000:19:00.0
  std::string numa;
};

/// The PCI components of a device path ("0000:17:00.0", ...), root complex first.
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

/// NCCL's names for how far apart two PCI devices are (nvidia-smi topo -m).
std::string distance(const Pci& a, const Pci& b) {
  if (root_complex(a.path) != root_complex(b.path)) return a.numa == b.numa ? "NODE" : "SYS";
  const auto ca = pci_chain(a.path), cb = pci_chain(b.path);
  std::size_t common = 0;
  while (common < ca.size() && common < cb.size() && ca[common] == cb[common]) ++common;
  if (common == 0) return "PHB";  // only the host bridge in common
  return common + 2 >= std::min(ca.size(), cb.size()) ? "PIX" : "PXB";
}

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
                   fmt::format("{}={} names {} {} this node does not have (present: {})", variable, found->second,
                               what, join(missing), list),
                   fmt::format("fix {} or unset it; NCCL would fall back (IB: to sockets)", variable)});
  else
    out.push_back({"nccl-env", f.exclude && !missing.empty() ? Status::kWarn : Status::kPass,
                   fmt::format("{}={}: {} present: {}", variable, found->second, what, list),
                   f.exclude && !missing.empty() ? fmt::format("excluding {} that do not exist", join(missing)) : ""});
}

void check_gpus(const SysTree& t, NodeReport& r, std::vector<Pci>& gpus) {
  for (const std::string& bdf : nvidia_gpu_addresses(t)) {
    const std::string dir = "/sys/bus/pci/devices/" + bdf;
    gpus.push_back({bdf, t.resolve(dir), t.text(dir + "/numa_node").value_or("-1")});
  }
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
    r.findings.push_back({"gpus", Status::kFail, fmt::format("{} GPU(s) ({}) but no NVIDIA driver loaded", gpus.size(), join(names)),
                          "install / load the driver (modprobe nvidia; nvidia-smi)"});
  else
    r.findings.push_back({"gpus", Status::kPass, fmt::format("{} GPU(s): {}; driver {}", gpus.size(), join(names), driver), ""});
}

}  // namespace

double RdmaPort::gbps() const {
  try {
    return parse_number(rate.substr(0, rate.find(' ')), "rate", NumberRange::at_least(0));
  } catch (const UsageError&) {
    return 0;
  }
}

std::vector<RdmaPort> rdma_ports(const SysTree& t) {
  std::vector<RdmaPort> ports;
  for (const std::string& dev : t.list("/sys/class/infiniband"))
    for (const std::string& port : t.list("/sys/class/infiniband/" + dev + "/ports")) {
      const std::string p = "/sys/class/infiniband/" + dev + "/ports/" + port;
      ports.push_back({dev, port, t.text(p + "/state").value_or("?"), t.text(p + "/phys_state").value_or("?"),
                       t.text(p + "/rate").value_or("?"), t.text(p + "/link_layer").value_or("?")});
    }
  return ports;
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

namespace {

void check_rdma(const SysTree& t, const std::map<std::string, std::string>& env, NodeReport& r,
                std::vector<std::pair<std::string, Pci>>& hcas) {
  const std::vector<std::string> devices = t.list("/sys/class/infiniband");
  if (devices.empty()) {
    r.findings.push_back({"rdma", Status::kWarn, "no RDMA device (/sys/class/infiniband is empty)",
                          "load the HCA driver (mlx5_ib) and check ibstat; without it NCCL runs NET/Socket between nodes"});
    return;
  }
  const std::vector<RdmaPort> ports = rdma_ports(t);
  for (const std::string& dev : devices) {
    const std::string base = "/sys/class/infiniband/" + dev;
    const std::string device_link = base + "/device";
    if (t.exists(device_link)) {
      const std::string path = t.resolve(device_link);
      const auto chain = pci_chain(path);
      hcas.push_back({dev, {chain.empty() ? dev : chain.back(), path, t.text(device_link + "/numa_node").value_or("-1")}});
    }
    for (const RdmaPort& found : ports) {
      if (found.device != dev) continue;
      const std::string& port = found.port;
      const std::string p = base + "/ports/" + port;
      const std::string &state = found.state, &phys = found.phys_state, &rate = found.rate, &layer = found.link_layer;
      const bool up = found.link_up();
      if (found.active() && up)
        r.findings.push_back({"rdma-port", Status::kPass, fmt::format("{} port {}: {}, {}, {}, {}", dev, port, state, phys, rate, layer), ""});
      else
        r.findings.push_back({"rdma-port", Status::kFail, fmt::format("{} port {}: {}, {} ({})", dev, port, state, phys, layer),
                              up ? "link up but not ACTIVE: InfiniBand needs a subnet manager (opensm / the switch's SM)"
                                 : "no link: check the cable, the switch port, ibstat / ibportstate"});
      if (layer == "Ethernet") {  // RoCE: NCCL needs a RoCE v2 GID with an IPv4 address (or NCCL_IB_GID_INDEX)
        std::vector<std::string> v2;
        for (const std::string& index : t.list(p + "/gids")) {
          const std::string gid = t.text(p + "/gids/" + index).value_or("");
          const std::string type = t.text(p + "/gid_attrs/types/" + index).value_or("");
          if (gid.empty() || gid.find_first_not_of("0:") == std::string::npos) continue;
          if (type.find("v2") != std::string::npos && gid.find("0000:0000:0000:0000:0000:ffff:") == 0) v2.push_back(index);
        }
        if (v2.empty())
          r.findings.push_back({"roce-gid", Status::kFail, fmt::format("{} port {}: no RoCE v2 GID with an IPv4 address", dev, port),
                                "give the port's netdev an IPv4 address (show_gids lists the table)"});
        else
          r.findings.push_back({"roce-gid", Status::kPass, fmt::format("{} port {}: RoCE v2 IPv4 GID index(es) {}", dev, port, join(v2)), ""});
        if (auto wanted = env.find("NCCL_IB_GID_INDEX"); wanted != env.end() &&
                                                        std::find(v2.begin(), v2.end(), wanted->second) == v2.end())
          r.findings.push_back({"nccl-env", Status::kFail,
                                fmt::format("NCCL_IB_GID_INDEX={} is not a RoCE v2 IPv4 GID of {} port {}", wanted->second, dev, port),
                                v2.empty() ? "fix the GID table first" : fmt::format("use one of {} or unset it", join(v2))});
      }
    }
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
    r.findings.push_back({"gdr", Status::kInfo, "GPUDirect RDMA not applicable (needs both GPUs and an RDMA device)", ""});
    return;
  }
  if (t.exists("/sys/module/nvidia_peermem")) {
    r.findings.push_back({"gdr", Status::kPass, "nvidia_peermem loaded: ibv_reg_mr accepts GPU memory", ""});
    return;
  }
  const auto [major, minor] = kernel_version(kernel);
  if (major > 5 || (major == 5 && minor >= 12))
    r.findings.push_back({"gdr", Status::kWarn, fmt::format("nvidia_peermem not loaded; kernel {} allows dma-buf", kernel),
                          "modprobe nvidia-peermem, or rely on dma-buf (NCCL 2.13+; open kernel modules on some GPUs)"});
  else
    r.findings.push_back({"gdr", Status::kFail, fmt::format("nvidia_peermem not loaded and kernel {} has no dma-buf for RDMA", kernel),
                          "modprobe nvidia-peermem (MLNX_OFED or the inbox module), else NCCL stages GPU data through host memory"});
}

// Locked memory matters only to RDMA registrations: a node with no RDMA device that needs none
// is not judged on it (a CPU-only node with the distribution's 8 MiB default is healthy).
void check_memlock(const SysTree& t, NodeReport& r, bool rdma_present, bool rdma_required) {
  const auto limits = t.text("/proc/self/limits");
  if (!limits) return;
  const bool judged = rdma_present || rdma_required;
  std::istringstream lines(*limits);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("Max locked memory")) continue;
    std::istringstream words(line.substr(17));
    std::string soft;
    words >> soft;
    if (soft == "unlimited") {
      r.findings.push_back({"memlock", Status::kPass, "max locked memory unlimited", ""});
      continue;
    }
    double bytes = 0;
    try {
      bytes = parse_number(soft, "/proc/self/limits: Max locked memory", NumberRange::at_least(0));
    } catch (const UsageError& e) {
      r.findings.push_back({"memlock", judged ? Status::kWarn : Status::kInfo, e.what(),
                            judged ? "check ulimit -l on the node" : ""});
      continue;
    }
    if (bytes >= 1024.0 * 1024 * 1024)
      r.findings.push_back({"memlock", Status::kPass, fmt::format("max locked memory {} bytes", soft), ""});
    else if (!judged)
      r.findings.push_back({"memlock", Status::kInfo,
                            fmt::format("max locked memory {} bytes, not judged: no RDMA device here and none required "
                                        "(only RDMA registrations lock memory)",
                                        soft),
                            ""});
    else
      r.findings.push_back({"memlock", Status::kFail, fmt::format("max locked memory {} bytes: RDMA registrations will fail", soft),
                            "memlock unlimited in /etc/security/limits.conf (and PropagateResourceLimits / LimitMEMLOCK for Slurm)"});
  }
}

void check_affinity(const SysTree& t, NodeReport& r, const std::vector<Pci>& gpus,
                    const std::vector<std::pair<std::string, Pci>>& hcas) {
  if (gpus.empty() || hcas.empty()) return;
  std::set<std::string> bridges;
  for (const Pci& g : gpus) {
    std::string best_name, best = "SYS";
    const Pci* best_hca = nullptr;
    const std::vector<std::string> order{"PIX", "PXB", "PHB", "NODE", "SYS"};
    for (const auto& [name, hca] : hcas) {
      const std::string d = distance(g, hca);
      if (!best_hca || std::find(order.begin(), order.end(), d) < std::find(order.begin(), order.end(), best)) {
        best = d, best_name = name, best_hca = &hca;
      }
    }
    const bool close = best == "PIX" || best == "PXB";
    r.findings.push_back({"affinity", close ? Status::kPass : Status::kWarn,
                          fmt::format("GPU {} (NUMA {}) nearest RDMA device {} (NUMA {}): {}", g.bdf, g.numa, best_name,
                                      best_hca->numa, best),
                          close ? "" : "no NIC behind the GPU's PCIe switch: NCCL's default NCCL_NET_GDR_LEVEL (PXB) turns "
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
    r.findings.push_back({"acs", Status::kFail, fmt::format("PCIe ACS redirects peer-to-peer traffic on {}", join(redirecting)),
                          "disable ACS on those bridges (BIOS, or setpci ECAP_ACS+6.w=0 at boot): GDR traffic now crosses the root complex"});
  else if (unreadable)
    r.findings.push_back({"acs", Status::kInfo, "PCIe extended config space not readable (run fb_doctor as root to check ACS)", ""});
  else if (!bridges.empty())
    r.findings.push_back({"acs", Status::kPass, fmt::format("no ACS redirection on the {} bridge(s) between GPUs and NICs", bridges.size()), ""});
}

void check_iommu(const SysTree& t, NodeReport& r) {
  const bool enabled = !t.list("/sys/class/iommu").empty();
  const std::string cmdline = t.text("/proc/cmdline").value_or("");
  const bool passthrough = cmdline.find("iommu=pt") != std::string::npos;
  if (!enabled)
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
                        const std::string& host, const std::string& nccl_version, bool rdma_required) {
  NodeReport r;
  r.host = host;
  if (!nccl_version.empty()) r.facts["nccl"] = nccl_version;
  std::vector<Pci> gpus;
  std::vector<std::pair<std::string, Pci>> hcas;
  check_gpus(tree, r, gpus);
  check_rdma(tree, environment, r, hcas);
  const bool rdma_present = !tree.list("/sys/class/infiniband").empty();
  check_gdr(tree, r, !gpus.empty(), rdma_present);
  check_memlock(tree, r, rdma_present, rdma_required);
  check_affinity(tree, r, gpus, hcas);
  check_iommu(tree, r);
  check_filter(r.findings, environment, "NCCL_IB_HCA", tree.list("/sys/class/infiniband"), "RDMA device(s)");
  check_filter(r.findings, environment, "NCCL_SOCKET_IFNAME", tree.list("/sys/class/net"), "interface(s)");
  for (const std::string& skipped : tree.skipped())
    r.findings.push_back({"skipped-file", Status::kWarn, "not read: " + skipped,
                          "sysfs and procfs hold only small regular files, folders and links within: re-record the "
                          "tree (scripts/record-sysfs.sh) or find what put this there"});
  return r;
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
      out.push_back({"same-" + item, Status::kPass, fmt::format("{} {} on all {} nodes", item, by_value.begin()->first, nodes.size()), ""});
      continue;
    }
    std::string detail;
    for (const auto& [value, hosts] : by_value) detail += fmt::format("{}{} on {}", detail.empty() ? "" : "; ", value, join(hosts));
    out.push_back({"same-" + item, item == "kernel" ? Status::kWarn : Status::kFail, fmt::format("{} differs: {}", item, detail),
                   "install the same version on every node: mixed versions break or slow NCCL"});
  }
  return out;
}

nlohmann::json to_json(const NodeReport& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : r.findings)
    findings.push_back({{"check", f.check}, {"status", status_name(f.status)}, {"detail", f.detail}, {"remedy", f.remedy}});
  return {{"host", r.host}, {"facts", r.facts}, {"findings", findings}};
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

NodeReport report_from_json(const nlohmann::json& j) {
  NodeReport r;
  r.host = j.value("host", std::string());
  r.facts = j.value("facts", std::map<std::string, std::string>{});
  for (const auto& f : j.value("findings", nlohmann::json::array())) {
    const std::string s = f.value("status", std::string());
    const Status status = s == "PASS" ? Status::kPass : s == "WARN" ? Status::kWarn : s == "FAIL" ? Status::kFail : Status::kInfo;
    r.findings.push_back({f.value("check", std::string()), status, f.value("detail", std::string()), f.value("remedy", std::string())});
  }
  return r;
}

}  // namespace fabricbench::doctor
