// SPDX-License-Identifier: Apache-2.0
#include "doctor/health.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/kernel_checks.hpp"
#include "doctor/pcie_checks.hpp"

namespace fabricbench::doctor {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

constexpr double kMostItems = 1024;      // GPUs or HCA ports on one node
constexpr double kFastestGbps = 100000;  // any rate in the rules, GB/s or Gb/s

double whole(const std::string& value, const std::string& what, double lowest, double highest) {
  const double n = parse_number(value, what, NumberRange{});
  // Digits, as a count is written: "1.0", "+1" or "1e0" is a typo or another tool's file.
  const bool digits = std::all_of(value.begin() + (value.front() == '-' ? 1 : 0), value.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw UsageError(fmt::format("{}: '{}' is not a whole number", what, value));
  // The bounds written out in full: NumberRange writes 2147483647 as 2.14748e+09.
  if (n < lowest || n > highest)
    throw UsageError(fmt::format("{}: '{}' is out of range (must be {:.0f} to {:.0f})", what, value, lowest, highest));
  if (n != std::floor(n)) throw UsageError(fmt::format("{}: '{}' is not a whole number", what, value));
  return n;
}

int count(const std::string& value, const std::string& what) {
  return static_cast<int>(whole(value, what, 0, kMostItems));
}

double rate(const std::string& value, const std::string& what) {
  return parse_number(value, what, NumberRange::between(0, kFastestGbps));
}

/// `what` is "FILE line N: key".
bool yes_or_no(const std::string& value, const std::string& what) {
  if (value != "yes" && value != "no") throw UsageError(fmt::format("{} is yes or no, not '{}'", what, value));
  return value == "yes";
}

// The doctor already says "no GPU" / "no RDMA device" as a WARN; a rules file that expects none
// makes that the expected state.
bool expected_absence(const Finding& f, const HealthRules& rules) {
  return (f.check == "gpus" && rules.gpus == 0 && f.detail.starts_with("no NVIDIA GPU")) ||
         (f.check == "rdma" && rules.hcas == 0 && f.detail.starts_with("no RDMA device"));
}

}  // namespace

namespace {

constexpr double kMostCount = 2147483647;  // vm.max_map_count and open files are C ints in the kernel

using RuleSetter = void (*)(HealthRules&, const std::string& value, const std::string& what);

/// Every key a rules file may hold, in the order the unknown-key message lists them.
const std::vector<std::pair<const char*, RuleSetter>>& rule_keys() {
  static const std::vector<std::pair<const char*, RuleSetter>> kKeys = {
      {"gpus", [](HealthRules& r, const std::string& v, const std::string& w) { r.gpus = count(v, w); }},
      {"hcas", [](HealthRules& r, const std::string& v, const std::string& w) { r.hcas = count(v, w); }},
      {"min_port_gbps",
       [](HealthRules& r, const std::string& v, const std::string& w) { r.min_port_gbps = rate(v, w); }},
      {"min_busbw_gbps",
       [](HealthRules& r, const std::string& v, const std::string& w) { r.min_busbw_gbps = rate(v, w); }},
      {"min_copy_gbps",
       [](HealthRules& r, const std::string& v, const std::string& w) { r.min_copy_gbps = rate(v, w); }},
      {"min_loopback_gbps",
       [](HealthRules& r, const std::string& v, const std::string& w) { r.min_loopback_gbps = rate(v, w); }},
      {"require_gdr",
       [](HealthRules& r, const std::string& v, const std::string& w) { r.require_gdr = yes_or_no(v, w); }},
      {"min_pcie_width", [](HealthRules& r, const std::string& v,
                            const std::string& w) { r.min_pcie_width = static_cast<int>(whole(v, w, 1, 32)); }},
      {"min_pcie_gen", [](HealthRules& r, const std::string& v,
                          const std::string& w) { r.min_pcie_gen = static_cast<int>(whole(v, w, 1, 7)); }},
      {"min_max_map_count", [](HealthRules& r, const std::string& v,
                               const std::string& w) { r.min_max_map_count = whole(v, w, 0, kMostCount); }},
      {"min_open_files", [](HealthRules& r, const std::string& v,
                            const std::string& w) { r.min_open_files = whole(v, w, 0, kMostCount); }},
      {"max_link_errors_per_hour",
       [](HealthRules& r, const std::string& v, const std::string& w) {
         r.max_link_errors_per_hour = parse_number(v, w, NumberRange::between(0, 1e12));
       }},
  };
  return kKeys;
}

}  // namespace

HealthRules parse_health_rules(const std::string& text, const std::string& source) {
  HealthRules rules;
  // A byte-order mark, as editors on Windows save: not part of the first key.
  std::istringstream lines(text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text);
  std::map<std::string, int> line_of_key;  // a key given twice: which one holds is not known
  int number_of_line = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number_of_line;
    line = trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string where = fmt::format("{} line {}", source, number_of_line);
    // A NUL would end the message that quotes the line at it: a rules file is text.
    if (line.find('\0') != std::string::npos) throw UsageError(fmt::format("{}: a NUL byte (not a text file?)", where));
    const auto equals = line.find('=');
    if (equals == std::string::npos) throw UsageError(fmt::format("{}: '{}' is not key = value", where, line));
    const std::string key = trimmed(line.substr(0, equals)), value = trimmed(line.substr(equals + 1));
    const auto& keys = rule_keys();
    const auto known = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return key == k.first; });
    if (known == keys.end()) {
      std::vector<std::string> names;
      for (const auto& k : keys) names.push_back(k.first);
      throw UsageError(fmt::format("{}: unknown key '{}' ({})", where, key, fmt::join(names, ", ")));
    }
    if (const auto [at, fresh] = line_of_key.emplace(key, number_of_line); !fresh)
      throw UsageError(fmt::format("{}: '{}' was given on line {} already", where, key, at->second));
    known->second(rules, value, fmt::format("{}: {}", where, key));
  }
  return rules;
}

std::string read_rules_file(const std::string& path) {
  // The doctor's careful reader, on this machine's "/": a FIFO would block the prolog, a device
  // could act on open, /dev/zero has no end.
  const SysTree files("/");
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  if (auto text = files.bytes(ec ? path : absolute)) return *text;
  const std::string why = files.skip_reason(ec ? path : absolute);
  throw UsageError(fmt::format("--rules {}: {} (give a rules file; examples in share/fabricbench)", path,
                               why.empty() ? "cannot be read" : why));
}

bool needs_rdma(const HealthRules& rules) {
  // max_link_errors_per_hour judges the ports there are: a node without any fails it for that
  // (link-errors), not for a kernel limit RDMA would need.
  return (rules.hcas && *rules.hcas > 0) || rules.min_port_gbps || rules.min_loopback_gbps || rules.require_gdr;
}

namespace {

/// The rules' items about RDMA ports: how many are up, and their rate.
void judge_ports(const std::vector<RdmaPort>& ports, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (rules.hcas) {
    int active = 0;
    for (const RdmaPort& p : ports) active += p.active() && p.link_up();
    if (active >= *rules.hcas)
      checks.push_back({"hca-count", Status::kPass,
                        fmt::format("{} RDMA port(s) ACTIVE/LinkUp, {} expected", active, *rules.hcas), ""});
    else
      checks.push_back(
          {"hca-count", Status::kFail,
           fmt::format("{} of {} RDMA port(s) ACTIVE/LinkUp, expected {}", active, ports.size(), *rules.hcas),
           "ibstat on the node: a port down (cable, switch port) or a driver that did not load"});
  }
  if (rules.min_port_gbps) {
    for (const RdmaPort& p : ports) {
      if (!(p.active() && p.link_up())) continue;  // the doctor's rdma-port finding already fails it
      const std::string what = fmt::format("{} port {}: {}", p.device, p.port, p.rate);
      if (p.gbps() <= 0)
        checks.push_back({"port-rate", Status::kFail,
                          fmt::format("{}: not a rate ('N Gb/sec'): min_port_gbps unjudged", what),
                          "read the port's rate file (ibstat Rate); the HCA driver wrote something else"});
      else if (p.gbps() >= *rules.min_port_gbps)
        checks.push_back({"port-rate", Status::kPass, what, ""});
      else
        checks.push_back({"port-rate", Status::kFail, fmt::format("{}, below {:g} Gb/s", what, *rules.min_port_gbps),
                          "the link trained down: check the cable and the switch port's speed (ibstat Rate)"});
    }
    if (ports.empty())
      checks.push_back({"port-rate", Status::kFail, "no RDMA port to judge against min_port_gbps",
                        "load the HCA driver (mlx5_ib), or drop min_port_gbps from the rules of a node without HCAs"});
  }
}

}  // namespace

std::vector<HealthCheck> judge_node(const SysTree& tree, const NodeReport& report, const HealthRules& rules,
                                    const NodeMeasurements& measured) {
  std::vector<HealthCheck> checks;
  for (const Finding& f : report.findings) {
    if (expected_absence(f, rules))
      checks.push_back({"doctor:" + f.check, Status::kPass, f.detail + ", as the rules expect", ""});
    else
      checks.push_back({"doctor:" + f.check, f.status, f.detail, f.remedy});
  }
  if (rules.gpus) {
    const auto found = static_cast<int>(nvidia_gpu_addresses(tree).size());
    if (found == *rules.gpus)
      checks.push_back({"gpu-count", Status::kPass, fmt::format("{} GPU(s), as expected", found), ""});
    else
      checks.push_back({"gpu-count", Status::kFail,
                        fmt::format("{} GPU(s) on the PCI bus, expected {}", found, *rules.gpus),
                        "a GPU fell off the bus or is hidden: lspci -d 10de:, dmesg for Xid / AER, reseat or replace"});
  }
  judge_ports(rdma_ports(tree), rules, checks);
  if (rules.require_gdr) {
    const Finding* gdr = nullptr;
    for (const Finding& f : report.findings)
      if (f.check == "gdr") gdr = &f;
    if (gdr && gdr->status == Status::kPass)
      checks.push_back({"gdr", Status::kPass, gdr->detail, ""});
    else
      checks.push_back({"gdr", Status::kFail, gdr ? "required, but " + gdr->detail : "required, but not checked",
                        "modprobe nvidia_peermem (or a dma-buf kernel and fb_rdma_* --mem cuda-dmabuf)"});
  }
  judge_pcie_rules(pcie_links(tree), rules, checks);
  judge_kernel_rules(tree, rules, checks);
  judge_link_error_rule(report.counters, rules, checks);
  if (measured.gpu_copy) judge_gpu_copy(*measured.gpu_copy, rules, checks);
  judge_loopback(measured, rules, checks);
  if (measured.all_reduce) judge_all_reduce(*measured.all_reduce, rules, checks);
  return checks;
}

Status overall(const std::vector<HealthCheck>& checks) {
  Status worst = Status::kPass;
  for (const HealthCheck& c : checks)
    if (c.status == Status::kFail || (c.status == Status::kWarn && worst != Status::kFail)) worst = c.status;
  return worst;
}

namespace {

// A remedy's first clause, up to its first ';' outside parentheses: "read them twice
// (--counter-interval above 0; ...)" keeps its parenthesis closed.
std::string first_clause(const std::string& remedy) {
  int depth = 0;
  for (std::size_t i = 0; i < remedy.size(); ++i) {
    if (remedy[i] == '(') ++depth;
    if (remedy[i] == ')' && depth > 0) --depth;
    if (remedy[i] == ';' && depth == 0) return remedy.substr(0, i);
  }
  return remedy;
}

}  // namespace

std::string summary_line(const std::string& host, const std::vector<HealthCheck>& checks) {
  const Status worst = overall(checks);
  if (worst == Status::kPass) return fmt::format("fb_health: OK {} ({} checks)", host, checks.size());
  std::size_t bad = 0;
  const HealthCheck* first = nullptr;
  for (const HealthCheck& c : checks)
    if (c.status == worst && ++bad == 1) first = &c;
  std::string line = fmt::format("fb_health: {} {}: {}", worst == Status::kFail ? "FAIL" : "WARN", host, first->detail);
  if (!first->remedy.empty()) line += fmt::format(" ({})", first_clause(first->remedy));
  if (bad > 1) line += fmt::format("; {} more", bad - 1);
  // One line, safe inside scontrol's Reason="..." and on a terminal: no newline, quote or escape.
  for (char& c : line)
    if (c == '"')
      c = '\'';
    else if (std::iscntrl(static_cast<unsigned char>(c)))
      c = ' ';
  return valid_utf8(line);
}

}  // namespace fabricbench::doctor
