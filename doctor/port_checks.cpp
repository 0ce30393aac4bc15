// SPDX-License-Identifier: Apache-2.0
#include "doctor/port_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/error.hpp"
#include "common/numbers.hpp"
#include "doctor/health.hpp"
#include "doctor/words.hpp"

namespace fabricbench::doctor {

double RdmaPort::gbps() const {
  // The kernel writes "N Gb/sec (WIDTH SPEED)": another unit, or beyond any link (XDR 4X is 800), is
  // not a rate read wrong by a factor of 1000 but no rate.
  constexpr double kFastestLink = 10000;
  const std::size_t space = rate.find(' ');
  if (space == std::string::npos || !std::string_view(rate).substr(space).starts_with(" Gb/sec")) return 0;
  try {
    return parse_kernel_number(rate.substr(0, space), "rate", NumberRange::between(0, kFastestLink));
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

// Widths from the InfiniBand Architecture Specification's PortCounters attribute.
const std::vector<ErrorCounter>& error_counters() {
  static const std::vector<ErrorCounter> kCounters = {{"symbol_error", 16},
                                                      {"link_error_recovery", 8},
                                                      {"link_downed", 8},
                                                      {"port_rcv_errors", 16},
                                                      {"port_rcv_remote_physical_errors", 16},
                                                      {"local_link_integrity_errors", 4},
                                                      {"excessive_buffer_overrun_errors", 4}};
  return kCounters;
}

PortCounters read_port_counters(const SysTree& t) {
  PortCounters all;
  for (const RdmaPort& p : rdma_ports(t)) {
    const std::string folder = "/sys/class/infiniband/" + p.device + "/ports/" + p.port + "/counters/";
    std::map<std::string, double> values;
    for (const ErrorCounter& c : error_counters()) {
      const auto text = t.text(folder + c.name);
      if (!text) continue;
      try {
        values[c.name] =
            parse_kernel_number(*text, folder + c.name, NumberRange::between(0, std::ldexp(1.0, c.bits) - 1));
      } catch (const UsageError&) {
        // A value that is not a count of the counter's width is left out, as an absent counter is.
      }
    }
    if (!values.empty()) all[p.name()] = values;
  }
  return all;
}

std::vector<PortErrorRate> error_rates(const CounterWindow& w) {
  std::vector<PortErrorRate> rates;
  if (!w.after || w.seconds <= 0) return rates;
  for (const auto& [port, before] : w.before) {
    const auto later = w.after->find(port);
    if (later == w.after->end()) continue;
    PortErrorRate rate{port, 0, 0, {}, {}, {}};
    for (const ErrorCounter& c : error_counters()) {
      const auto first = before.find(c.name), second = later->second.find(c.name);
      const bool in_first = first != before.end(), in_second = second != later->second.end();
      if (in_first != in_second) {
        rate.unjudged.push_back(
            fmt::format("{} not a readable count in the {} reading", c.name, in_first ? "second" : "first"));
        continue;
      }
      if (!in_first) continue;  // a counter this port does not keep
      if (second->second < first->second) {
        rate.unjudged.push_back(
            fmt::format("{} {:.0f} -> {:.0f}: lower in the second reading", c.name, first->second, second->second));
        continue;
      }
      if (second->second == std::ldexp(1.0, c.bits) - 1)
        rate.saturated.push_back(fmt::format("{} at {:.0f}", c.name, second->second));
      if (second->second > first->second) {
        rate.errors += second->second - first->second;
        rate.rising.push_back(fmt::format("{} {:.0f} -> {:.0f}", c.name, first->second, second->second));
      }
    }
    rate.per_hour = rate.errors / w.seconds * 3600;
    rates.push_back(rate);
  }
  return rates;
}

namespace {

// "2.0" seconds, and "0.0011" where a window is that short (".1f" read it as 0.0).
std::string window_text(double seconds) {
  return seconds >= 0.1 ? fmt::format("{:.1f}", seconds) : fmt::format("{:.2g}", seconds);
}

// "50400" errors an hour, and "0.244" where a week's window saw 41 (".0f" read it as 0).
std::string rate_text(double per_hour) {
  return per_hour >= 100 ? fmt::format("{:.0f}", per_hour) : fmt::format("{:.3g}", per_hour);
}

constexpr const char* kCableRemedy =
    "a bad cable, transceiver or switch port: mlxlink -d DEVICE -m (BER, FEC), ibqueryerrors on the fabric; reseat or "
    "replace the cable";

/// "mlx5_0 port 1 symbol_error 12": the counters that are not zero in one reading.
std::vector<std::string> nonzero(const PortCounters& counters) {
  std::vector<std::string> out;
  for (const auto& [port, values] : counters)
    for (const auto& [name, value] : values)
      if (value > 0) out.push_back(fmt::format("{} {} {:.0f}", port, name, value));
  return out;
}

}  // namespace

void check_link_errors(const CounterWindow& w, const std::vector<PortErrorRate>& rates, std::vector<Finding>& out) {
  if (w.before.empty()) return;  // no port with counters: the rdma findings say what there is
  if (!w.after) {
    const auto totals = nonzero(w.before);
    out.push_back(
        {"link-errors", Status::kInfo,
         fmt::format("error counters of {} port(s) read once ({}), so no rate; since they were last cleared: {}",
                     w.before.size(), w.how, totals.empty() ? "all zero" : join_at_most(totals, 8)),
         ""});
    return;
  }
  std::size_t steady = 0;
  for (const PortErrorRate& r : rates) {
    if (!r.rising.empty())
      out.push_back({"link-errors", Status::kWarn,
                     fmt::format("{}: {} in {} s ({}): {} errors/hour", r.port, join(r.rising), window_text(w.seconds),
                                 w.how, rate_text(r.per_hour)),
                     kCableRemedy});
    if (!r.saturated.empty())
      out.push_back({"link-errors", Status::kWarn,
                     fmt::format("{}: {} (saturated: new errors no longer show)", r.port, join(r.saturated)),
                     "clear the port's counters (perfquery -x, or -R) and read them again"});
    if (!r.unjudged.empty())
      out.push_back({"link-errors", Status::kWarn,
                     fmt::format("{}: {}: no rate can be taken, so no error rate is claimed", r.port, join(r.unjudged)),
                     "read the counters again (perfquery -x); counters cleared between the readings restart the "
                     "window"});
    steady += r.rising.empty() && r.saturated.empty() && r.unjudged.empty();
  }
  if (steady > 0)
    out.push_back({"link-errors", Status::kPass,
                   fmt::format("error counters of {} port(s) steady over {:.1f} s ({}): no symbol, link recovery, link "
                               "down or receive error added",
                               steady, w.seconds, w.how),
                   ""});
}

void check_port_rates(const std::vector<RdmaPort>& ports, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const RdmaPort*>> by_layer;
  for (const RdmaPort& p : ports)
    if (p.active() && p.link_up() && p.gbps() > 0) by_layer[p.link_layer].push_back(&p);
  for (const auto& [layer, active] : by_layer) {
    if (active.size() < 2) continue;  // nothing on this node to compare it with
    const RdmaPort* fastest = *std::max_element(
        active.begin(), active.end(), [](const RdmaPort* a, const RdmaPort* b) { return a->gbps() < b->gbps(); });
    std::size_t slower = 0;
    for (const RdmaPort* p : active) {
      if (p->gbps() >= fastest->gbps()) continue;
      ++slower;
      out.push_back({"port-rates", Status::kWarn,
                     fmt::format("{}: {}, below the {} of this node's fastest {} port ({})", p->name(), p->rate,
                                 fastest->rate, layer, fastest->name()),
                     "the link trained down: check the cable and the switch port (ibstat Rate, mlxlink); a slow port "
                     "slows every NCCL ring through it"});
    }
    if (slower == 0)
      out.push_back({"port-rates", Status::kPass,
                     fmt::format("all {} active {} ports at {}", active.size(), layer, fastest->rate), ""});
  }
}

void check_firmware(const SysTree& t, std::vector<Finding>& out, std::map<std::string, std::string>& facts) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_kind;  // kind -> firmware -> devices
  for (const std::string& dev : t.list("/sys/class/infiniband")) {
    const auto firmware = t.text("/sys/class/infiniband/" + dev + "/fw_ver");
    if (!firmware || firmware->empty()) continue;
    const std::string kind = t.text("/sys/class/infiniband/" + dev + "/hca_type").value_or("");
    by_kind[kind.empty() ? "?" : kind][*firmware].push_back(dev);
  }
  std::vector<std::string> fact;
  for (const auto& [kind, versions] : by_kind) {
    std::vector<std::string> parts;
    for (const auto& [firmware, devices] : versions) {
      parts.push_back(fmt::format("{} on {}", firmware, join(devices)));
      fact.push_back(fmt::format("{} {}", kind, firmware));
    }
    if (versions.size() == 1)
      out.push_back({"hca-firmware", Status::kPass, fmt::format("{}: firmware {}", kind, parts.front()), ""});
    else
      out.push_back({"hca-firmware", Status::kWarn,
                     fmt::format("{} devices differ in firmware: {}", kind, join(parts, "; ")),
                     "flash one firmware on every device of a kind (mlxfwmanager, mstflint): versions differ in "
                     "features and fixes"});
  }
  if (!fact.empty()) facts["hca firmware"] = join(fact);
}

void compare_port_rates(const std::map<std::string, std::vector<RdmaPort>>& ports_by_host, std::vector<Finding>& out) {
  std::map<std::string, double> fastest;  // link layer -> Gb/s
  std::map<std::string, std::string> fastest_rate;
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& [host, ports] : ports_by_host)
    for (const RdmaPort& p : ports) {
      if (!(p.active() && p.link_up()) || p.gbps() <= 0) continue;
      hosts[p.link_layer].insert(host);
      if (p.gbps() > fastest[p.link_layer]) fastest[p.link_layer] = p.gbps(), fastest_rate[p.link_layer] = p.rate;
    }
  for (const auto& [layer, best] : fastest) {
    if (hosts[layer].size() < 2) continue;
    std::size_t active = 0, slower = 0;
    for (const auto& [host, ports] : ports_by_host)
      for (const RdmaPort& p : ports) {
        if (p.link_layer != layer || !(p.active() && p.link_up()) || p.gbps() <= 0) continue;
        ++active;
        if (p.gbps() >= best) continue;
        ++slower;
        out.push_back({"port-rates", Status::kWarn,
                       fmt::format("{} {}: {}, below the {} other nodes' {} ports show", host, p.name(), p.rate,
                                   fastest_rate[layer], layer),
                       "the link trained down, or the node has slower HCAs than the rest: ibstat Rate, mlxlink, the "
                       "cable and the switch port"});
      }
    if (slower == 0)
      out.push_back({"port-rates", Status::kPass,
                     fmt::format("all {} active {} ports on {} nodes at {}", active, layer, hosts[layer].size(),
                                 fastest_rate[layer]),
                     ""});
  }
}

void judge_link_error_rule(const CounterWindow& w, const HealthRules& rules, std::vector<HealthCheck>& checks) {
  if (!rules.max_link_errors_per_hour) return;
  const double most = *rules.max_link_errors_per_hour;
  const std::string rule = fmt::format("max_link_errors_per_hour = {:g}", most);
  if (w.before.empty() || !w.after) {
    checks.push_back({"link-errors", Status::kFail,
                      w.before.empty()
                          ? fmt::format("no RDMA port error counters to judge against {}", rule)
                          : fmt::format("error counters read once ({}): no rate to judge against {}", w.how, rule),
                      "read them twice (--counter-interval above 0; a recorded tree needs its ROOT.later snapshot), or "
                      "drop the rule on a node without HCAs"});
    return;
  }
  std::size_t met = 0;
  const std::vector<PortErrorRate> rates = error_rates(w);
  if (rates.empty()) {
    checks.push_back(
        {"link-errors", Status::kFail,
         fmt::format("no port had error counters in both readings ({}): no rate to judge against {}", w.how, rule),
         "check that the port counters are readable on the node (/sys/class/infiniband/*/ports/*/counters)"});
    return;
  }
  for (const PortErrorRate& r : rates) {
    if (!r.unjudged.empty())
      checks.push_back({"link-errors", Status::kFail,
                        fmt::format("{}: {}: no rate to judge against {}", r.port, join(r.unjudged), rule),
                        "read the counters again (perfquery -x); counters cleared between the readings restart the "
                        "window"});
    else if (!r.saturated.empty())
      checks.push_back({"link-errors", Status::kFail,
                        fmt::format("{}: {}: a saturated counter shows no new error", r.port, join(r.saturated)),
                        "clear the port's counters (perfquery -x) so new errors show"});
    else if (r.per_hour > most)
      checks.push_back({"link-errors", Status::kFail,
                        fmt::format("{}: {} in {} s: {} errors/hour, above {}", r.port, join(r.rising),
                                    window_text(w.seconds), rate_text(r.per_hour), rule),
                        kCableRemedy});
    else
      ++met;
  }
  if (met < rates.size()) return;
  // Steady counters over a window shorter than one error at the rule's rate show nothing of it: one
  // error in 0.001 s would be 3.6 million an hour. (A rule of 0 asks that none be seen in 1 s at least.)
  const double least_seconds = most > 0 ? 3600 / most : 1;
  if (w.seconds < least_seconds)
    checks.push_back({"link-errors", Status::kFail,
                      fmt::format("{} port(s) over {:.3g} s ({}): too short to judge {} (one error needs {:.3g} s)",
                                  met, w.seconds, w.how, rule, least_seconds),
                      fmt::format("read the counters {:.3g} s apart or more (--counter-interval, at most a quarter "
                                  "of --budget; a recorded tree: its ROOT.later interval_seconds)",
                                  least_seconds)});
  else
    checks.push_back({"link-errors", Status::kPass,
                      fmt::format("{} port(s) within {} over {:.1f} s ({})", met, rule, w.seconds, w.how), ""});
}

}  // namespace fabricbench::doctor
