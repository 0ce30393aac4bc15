// SPDX-License-Identifier: Apache-2.0
#include "doctor/pcie_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/health.hpp"
#include "doctor/pci_paths.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {
namespace {

/// What one end of a link says of it (its own Link Status and Link Capabilities).
struct LinkEnd {
  double width = 0, max_width = 0, gts = 0, max_gts = 0;
};

/// The leading number of a sysfs link attribute ("16", "32.0 GT/s PCIe", "8 GT/s"); 0 when it is
/// absent or "Unknown".
double leading_number(const std::optional<std::string>& text, const std::string& what) {
  if (!text) return 0;
  try {
    return parse_kernel_number(text->substr(0, text->find(' ')), what, NumberRange::between(0, 1024));
  } catch (const UsageError&) {
    return 0;
  }
}

LinkEnd read_end(const SysTree& t, const std::string& dir) {
  return {leading_number(t.text(dir + "/current_link_width"), "current_link_width"),
          leading_number(t.text(dir + "/max_link_width"), "max_link_width"),
          leading_number(t.text(dir + "/current_link_speed"), "current_link_speed"),
          leading_number(t.text(dir + "/max_link_speed"), "max_link_speed")};
}

/// The smaller of two maxima, either of which may be unknown (0).
double lesser_known(double a, double b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); }

/// The sysfs folder of each part of a device's chain: the path cut after that part.
std::vector<std::string> chain_folders(const std::string& path, const std::vector<std::string>& chain) {
  std::vector<std::string> folders;
  for (const std::string& part : chain) folders.push_back(path.substr(0, path.find("/" + part + "/") + 1) + part);
  if (!folders.empty()) folders.back() = path;
  return folders;
}

/// Adds the links of one device's chain to `links` (by the key of each link). A chain alternates
/// port, device below it, port, ... from the root port down (a switch's upstream port is the
/// device below a port; its downstream ports are ports), so the links pair up from the bottom.
void add_chain(const SysTree& t, const std::string& path, const std::string& end_name, bool gpu,
               std::map<std::string, PcieLink>& links) {
  const std::vector<std::string> chain = pci_chain(path);
  const std::vector<std::string> folders = chain_folders(path, chain);
  for (auto lower = static_cast<std::ptrdiff_t>(chain.size()) - 1; lower >= 0; lower -= 2) {
    const auto at = static_cast<std::size_t>(lower);
    const bool has_upper = lower > 0;
    const std::string upper = has_upper ? chain[at - 1] : "";
    // A multi-function device (an HCA's two ports) has one link per port above it.
    const std::string key = has_upper ? upper : chain[at].substr(0, chain[at].rfind('.'));
    PcieLink& link = links[key];
    if (link.leads_to.find(end_name) == std::string::npos)
      link.leads_to += (link.leads_to.empty() ? "" : ", ") + end_name;
    link.gpu_below = link.gpu_below || gpu;
    if (!link.lower.empty()) continue;  // read already, from a sibling function
    const LinkEnd below = read_end(t, folders[at]);
    const LinkEnd above = has_upper ? read_end(t, folders[at - 1]) : LinkEnd{};
    link.upper = upper;
    link.lower = chain[at];
    link.lower_is_end = at + 1 == chain.size();
    link.width = below.width > 0 ? below.width : above.width;
    link.gts = below.gts > 0 ? below.gts : above.gts;
    link.max_width = lesser_known(below.max_width, above.max_width);
    link.max_gts = lesser_known(below.max_gts, above.max_gts);
    link.readable = link.width > 0 && link.gts > 0;
  }
}

std::string link_name(const PcieLink& l) {
  if (l.lower_is_end) return l.leads_to.starts_with("GPU") ? l.leads_to : fmt::format("{} ({})", l.leads_to, l.lower);
  return fmt::format("link {} -> {} (above {})", l.upper.empty() ? "host bridge" : l.upper, l.lower, l.leads_to);
}

std::string speed(double gts) { return fmt::format("{:g} GT/s ({})", gts, pcie_generation(gts)); }

std::string share(double part, double whole) {
  const double fraction = part / whole;
  if (fraction == 0.5) return "half";
  if (fraction == 0.25) return "a quarter";
  return fmt::format("{:.0f} %", 100 * fraction);
}

/// A GPU's link that only lowered its speed: what an idle GPU does to save power.
bool idle_gpu_speed(const PcieLink& l) { return l.gpu_below && l.width >= l.max_width && l.gts < l.max_gts; }

}  // namespace

std::vector<PcieLink> pcie_links(const SysTree& t) {
  std::map<std::string, PcieLink> by_key;
  for (const Pci& gpu : gpu_functions(t)) add_chain(t, gpu.path, "GPU " + gpu.bdf, true, by_key);
  for (const auto& [name, hca] : rdma_functions(t)) add_chain(t, hca.path, name, false, by_key);
  std::vector<PcieLink> links;
  for (auto& [key, link] : by_key) links.push_back(std::move(link));
  return links;
}

std::string pcie_generation(double gts) {
  constexpr double kRates[] = {2.5, 5, 8, 16, 32, 64, 128};  // GT/s of Gen1 to Gen7
  for (int gen = 0; gen < 7; ++gen)
    if (gts > 0 && gts <= kRates[gen] * 1.01) return fmt::format("Gen{}", gen + 1);
  return "Gen?";
}

void check_pcie_links(const std::vector<PcieLink>& links, std::vector<Finding>& out) {
  if (links.empty()) {
    out.push_back(
        {"pcie-link", Status::kInfo, "no NVIDIA GPU or RDMA device with a PCI function: no PCIe link to check", ""});
    return;
  }
  std::vector<std::string> unreadable, fine;
  std::size_t at_best = 0;
  for (const PcieLink& l : links) {
    const std::string now = fmt::format("{}: x{:g} at {}", link_name(l), l.width, speed(l.gts));
    if (!l.readable) {
      unreadable.push_back(l.lower);
    } else if (l.max_width > 0 && l.width < l.max_width) {
      out.push_back({"pcie-link", Status::kWarn,
                     fmt::format("{}, both ends allow x{:g}: trained at {} its width, which cuts what NCCL and "
                                 "GPUDirect RDMA move through it to {}",
                                 now, l.max_width, share(l.width, l.max_width), share(l.width, l.max_width)),
                     "reseat the card or riser and check the slot's lane split (bifurcation) in the BIOS; lspci -vv "
                     "LnkSta against LnkCap. A width below max is a fault, never power saving"});
    } else if (l.max_gts > 0 && l.gts < l.max_gts && idle_gpu_speed(l)) {
      out.push_back({"pcie-link", Status::kInfo,
                     fmt::format("{}, both ends allow {}: speed below max at full width, as an idle GPU shows (PCIe "
                                 "link power management lowers the speed until there is traffic): not a fault; the "
                                 "width is what counts (under load: nvidia-smi -q -d PCIE, fb_health's gpu-copy)",
                                 now, speed(l.max_gts)),
                     ""});
    } else if (l.max_gts > 0 && l.gts < l.max_gts) {
      out.push_back({"pcie-link", Status::kWarn,
                     fmt::format("{}, both ends allow {}: trained at a lower speed, {} of what the link can move", now,
                                 speed(l.max_gts), share(l.gts, l.max_gts)),
                     "reseat the card, check the slot's PCIe speed in the BIOS (Auto or the highest Gen), the riser "
                     "and the firmware (lspci -vv LnkSta, mlxlink for an HCA)"});
    } else {
      fine.push_back(fmt::format("x{:g} {}", l.width, pcie_generation(l.gts)));
      ++at_best;
    }
  }
  if (!fine.empty()) {
    std::sort(fine.begin(), fine.end());
    fine.erase(std::unique(fine.begin(), fine.end()), fine.end());
    out.push_back({"pcie-link", Status::kPass,
                   fmt::format("{} of {} PCIe link(s) between the GPUs / RDMA devices and their root ports at the "
                               "width and speed both ends allow ({})",
                               at_best, links.size(), join(fine)),
                   ""});
  }
  if (!unreadable.empty())
    out.push_back({"pcie-link", Status::kInfo,
                   fmt::format("link width and speed not in sysfs for {} (a tree recorded before "
                               "scripts/record-sysfs.sh read them, a device without a PCIe capability on a VM's "
                               "emulated bus, or a kernel older than 4.13)",
                               join_at_most(unreadable, 8)),
                   ""});
}

namespace {

/// fb_health's check of one rule over every link: a FAIL per link below it (or unreadable), one
/// PASS when all meet it, a FAIL when there is no link at all (fail closed).
template <class Judge>
void judge_links(const std::vector<PcieLink>& links, const std::string& name, const std::string& rule, Judge judge,
                 std::vector<HealthCheck>& checks) {
  if (links.empty()) {
    checks.push_back({name, Status::kFail,
                      fmt::format("no PCIe link of a GPU or RDMA device to judge against {}", rule),
                      fmt::format("a GPU or HCA is missing from the PCI bus (lspci), or drop {} from the rules of a "
                                  "node without them",
                                  rule)});
    return;
  }
  std::size_t met = 0;
  for (const PcieLink& l : links) {
    if (!l.readable) {
      checks.push_back({name, Status::kFail,
                        fmt::format("{}: link width and speed cannot be read from sysfs, so {} cannot be judged",
                                    link_name(l), rule),
                        "check the node's kernel (4.13 or later shows them) and that it is not an emulated bus"});
      continue;
    }
    if (std::string why = judge(l); !why.empty())
      checks.push_back({name, Status::kFail, why,
                        "reseat the card or riser, check the slot's lane split and PCIe speed in the BIOS; lspci -vv "
                        "LnkSta against LnkCap"});
    else
      ++met;
  }
  if (met == links.size())
    checks.push_back(
        {name, Status::kPass, fmt::format("all {} PCIe link(s) of the GPUs and RDMA devices meet {}", met, rule), ""});
}

}  // namespace

void judge_pcie_rules(const std::vector<PcieLink>& links, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (const auto least = rules.min_pcie_width) {
    const std::string rule = fmt::format("min_pcie_width = {}", *least);
    judge_links(
        links, "pcie-width", rule,
        [&](const PcieLink& l) {
          if (l.width >= *least) return std::string();
          return fmt::format("{}: x{:g} (both ends allow x{:g}), below {}", link_name(l), l.width, l.max_width, rule);
        },
        checks);
  }
  if (const auto least = rules.min_pcie_gen) {
    const std::string rule = fmt::format("min_pcie_gen = {}", *least);
    const double least_gts = std::vector<double>{0, 2.5, 5, 8, 16, 32, 64, 128}.at(static_cast<std::size_t>(*least));
    judge_links(
        links, "pcie-gen", rule,
        [&](const PcieLink& l) {
          // An idle GPU's link is at 2.5 GT/s whatever it trained to: judge what both ends allow, and
          // leave the trained speed to the copy test (min_copy_gbps), which puts traffic on it.
          const double judged = idle_gpu_speed(l) ? l.max_gts : l.gts;
          if (judged >= least_gts * 0.99) return std::string();
          if (idle_gpu_speed(l))
            return fmt::format("{}: idle at {}, and both ends allow only {}, below {}", link_name(l), speed(l.gts),
                               speed(l.max_gts), rule);
          return fmt::format("{}: {} (both ends allow {}), below {}", link_name(l), speed(l.gts), speed(l.max_gts),
                             rule);
        },
        checks);
  }
}

}  // namespace fabricbench::doctor
