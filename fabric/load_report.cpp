// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/stats.hpp"
#include "fabric/fabric_tree.hpp"
#include "fabric/load_patterns.hpp"

namespace fabricbench {
namespace {

double gbps_of(const ResultRow& row) { return row.busbw_median_bytes_per_s * 8 / 1e9; }

std::string group_name(const GroupRate& g) { return load_group_name(g.operation, g.leader, g.others); }

void print_groups(std::FILE* out, const LoadReport& r) {
  std::vector<double> rates;
  for (const GroupRate& g : r.groups) rates.push_back(g.gbps);
  const double median = median_of(rates);
  fmt::print(out, "# Load {}: {}; each group's median busbw at {} B{}:\n", r.pattern, r.note, r.size_bytes,
             r.pattern == "incast"        ? " (the target's ingress)"
             : r.pattern == "one-to-many" ? " (the source's egress)"
                                          : "");
  for (const GroupRate& g : r.groups)
    fmt::print(out, "#   round {}: {} {} {:.3f} Gb/s ({:.2f} x the median{})\n", g.round, g.operation, group_name(g),
               g.gbps, median > 0 ? g.gbps / median : 0.0,
               g.expected_gbps > 0 ? fmt::format("; {:.1f} % of the {:.4g} Gb/s its path can carry",
                                                 100 * g.gbps / g.expected_gbps, g.expected_gbps)
                                   : "");
  if (r.pattern == "bisection") {
    double sum = 0;
    for (double rate : rates) sum += rate;
    fmt::print(out, "#   bisection: {} pair(s) at once, {:.3f} Gb/s in all (each way)\n", rates.size(), sum);
  } else if (r.groups.size() > 1) {
    fmt::print(out, "#   median {:.3f} Gb/s over {} group(s)\n", median, r.groups.size());
  }
}

// "2.07 x", or why there is no factor (a size that moved no data, a figure missing).
std::string factor_text(double factor) { return factor > 0 ? fmt::format("{:.2f} x", factor) : "unknown"; }

void print_victims(std::FILE* out, const LoadReport& r) {
  fmt::print(out, "# Congestion impact ({}; victim under load / alone, GPCNeT's factor: above 1 the load slows it):\n",
             r.note);
  for (const VictimImpact& v : r.victims)
    fmt::print(out,
               "#   {} under {}: median latency at {} B {:.1f} -> {:.1f} us: {}; median bandwidth at {} B {:.3f} -> "
               "{:.3f} Gb/s: {}\n",
               v.victim, v.load == "none" ? "no load (alone again)" : v.load, v.small_bytes, v.latency_alone_s * 1e6,
               v.latency_loaded_s * 1e6, factor_text(v.latency_factor()), v.large_bytes, v.gbps_alone, v.gbps_loaded,
               factor_text(v.bandwidth_factor()));
}

// A factor for the JSON file: null when unknown.
nlohmann::json known(double factor) { return factor > 0 ? nlohmann::json(factor) : nlohmann::json(nullptr); }

class LoadExhibit final : public SummaryExhibit {
 public:
  explicit LoadExhibit(LoadReport report) : r_(std::move(report)) {}
  std::string json_key() const override { return "load"; }

  nlohmann::json to_json() const override {
    nlohmann::json groups = nlohmann::json::array(), victims = nlohmann::json::array();
    for (const GroupRate& g : r_.groups)
      groups.push_back({{"operation", g.operation},
                        {"leader", g.leader},
                        {"others", g.others},
                        {"round", g.round},
                        {"gbps", g.gbps},
                        {"expected_gbps", g.expected_gbps}});
    for (const VictimImpact& v : r_.victims)
      victims.push_back({{"victim", v.victim},
                         {"load", v.load},
                         {"small_bytes", v.small_bytes},
                         {"large_bytes", v.large_bytes},
                         {"latency_alone_s", v.latency_alone_s},
                         {"latency_loaded_s", v.latency_loaded_s},
                         {"gbps_alone", v.gbps_alone},
                         {"gbps_loaded", v.gbps_loaded},
                         {"latency_factor", known(v.latency_factor())},
                         {"bandwidth_factor", known(v.bandwidth_factor())}});
    return {{"pattern", r_.pattern},
            {"note", r_.note},
            {"size_bytes", r_.size_bytes},
            {"groups", groups},
            {"victims", victims}};
  }

  void print(std::FILE* out) const override {
    if (!r_.groups.empty()) print_groups(out, r_);
    if (!r_.victims.empty()) print_victims(out, r_);
  }

  std::vector<Gauge> gauges() const override {
    std::vector<Gauge> gauges;
    const char* help =
        "A congestion victim's time (latency) or rate (bandwidth) under load over alone: GPCNeT's factor.";
    for (const VictimImpact& v : r_.victims)  // an unknown factor has no gauge
      for (const auto& [measure, factor] :
           {std::pair{"latency", v.latency_factor()}, {"bandwidth", v.bandwidth_factor()}})
        if (factor > 0)
          gauges.push_back({"fabricbench_congestion_impact_factor",
                            help,
                            {{"victim", v.victim}, {"load", v.load}, {"measure", measure}},
                            factor});
    return gauges;
  }

 private:
  LoadReport r_;
};

}  // namespace

std::string load_group_name(std::string_view operation, const std::string& leader, const std::string& others) {
  if (operation == "incast") return fmt::format("into {} from {}", leader, others);
  if (operation == "one-to-many") return fmt::format("from {} to {}", leader, others);
  if (operation == "all-to-all") return fmt::format("{}+{}", leader, others);
  return fmt::format("{} - {}", leader, others);
}

double VictimImpact::latency_factor() const {
  return latency_alone_s > 0 && latency_loaded_s > 0 ? latency_loaded_s / latency_alone_s : 0;
}

double VictimImpact::bandwidth_factor() const {
  return gbps_alone > 0 && gbps_loaded > 0 ? gbps_alone / gbps_loaded : 0;
}

LoadReport load_report(const std::string& pattern, const std::string& note, const std::vector<ResultRow>& rows) {
  LoadReport report{pattern, note, 0, {}, {}};
  for (const ResultRow& row : rows) report.size_bytes = std::max(report.size_bytes, row.size_bytes);
  std::map<std::string, VictimImpact> victims;  // by "a - b"
  std::vector<std::string> order;
  for (const ResultRow& row : rows) {
    const std::string load = row.settings.get("load");
    if (load == "aggressor") continue;
    if (row.operation != "victim") {
      if (row.size_bytes == report.size_bytes)
        report.groups.push_back({row.operation, row.host, row.peer_host, row.round, gbps_of(row)});
      continue;
    }
    const std::string name = row.host + " - " + row.peer_host;
    if (!victims.contains(name)) {
      order.push_back(name);
      victims[name] = {name, "", row.size_bytes, row.size_bytes};
    }
    VictimImpact& v = victims[name];  // the sizes first: its smallest and largest
    v.small_bytes = std::min(v.small_bytes, row.size_bytes);
    v.large_bytes = std::max(v.large_bytes, row.size_bytes);
  }
  for (const ResultRow& row : rows) {  // then its figures at those sizes, alone and loaded
    if (row.operation != "victim") continue;
    VictimImpact& v = victims[row.host + " - " + row.peer_host];
    const std::string load = row.settings.get("load");
    const bool alone = load == "alone";
    if (!alone) v.load = load;
    if (row.size_bytes == v.small_bytes) (alone ? v.latency_alone_s : v.latency_loaded_s) = row.time_s.median;
    if (row.size_bytes == v.large_bytes) (alone ? v.gbps_alone : v.gbps_loaded) = gbps_of(row);
  }
  for (const std::string& name : order) report.victims.push_back(victims[name]);
  return report;
}

namespace {

// One flow of a group: from one node to another.
struct Flow {
  std::string from, to;
};

std::vector<std::string> members_of(const GroupRate& g) {
  std::vector<std::string> members{g.leader};
  for (std::size_t start = 0; start <= g.others.size();) {
    const std::size_t plus = std::min(g.others.find('+', start), g.others.size());
    if (plus > start) members.push_back(g.others.substr(start, plus - start));
    start = plus + 1;
  }
  return members;
}

std::vector<Flow> flows_of(const GroupRate& g) {
  const std::vector<std::string> m = members_of(g);
  std::vector<Flow> flows;
  if (const std::optional<LoadShape> shape = load_shape(g.operation))
    for (const auto& [from, to] : flows_of(*shape, static_cast<int>(m.size())))
      flows.push_back({m[static_cast<std::size_t>(from)], m[static_cast<std::size_t>(to)]});
  return flows;
}

// The resources a flow crosses, each with its rate (0 unknown): the sender's cable out, the
// receiver's cable in, and across leaves the sender's leaf's uplink up and the receiver's down.
std::vector<std::pair<std::string, double>> resources_of(const Flow& f, const RateRule& rule) {
  const auto leaf = [&](const std::string& node) -> const TreeSwitch* {
    return rule.tree ? rule.tree->leaf_of(tree_node_name(*rule.tree, node)) : nullptr;
  };
  const auto cable = [&](const TreeSwitch* l) {
    return l && l->node_rate_gbps > 0 ? l->node_rate_gbps : rule.line_rate_gbps;
  };
  const TreeSwitch* from = leaf(f.from);
  const TreeSwitch* to = leaf(f.to);
  std::vector<std::pair<std::string, double>> resources = {{"out " + f.from, cable(from)}, {"in " + f.to, cable(to)}};
  if (from && to && from != to) {
    resources.emplace_back("up " + from->name, from->uplink_rate_gbps);
    resources.emplace_back("down " + to->name, to->uplink_rate_gbps);
  }
  return resources;
}

}  // namespace

void set_expected_rates(LoadReport& report, const RateRule& rule) {
  if (!rule.tree && !(rule.line_rate_gbps > 0)) return;
  std::map<std::pair<int, std::string>, int> sharing;  // (round, resource) -> flows through it
  for (const GroupRate& g : report.groups)
    for (const Flow& f : flows_of(g))
      for (const auto& [resource, rate] : resources_of(f, rule)) ++sharing[{g.round, resource}];
  for (GroupRate& g : report.groups) {
    std::map<std::string, double> out_of, into;  // each node's expected egress and ingress in the group
    bool known = true;
    for (const Flow& f : flows_of(g)) {
      double share = 0;  // the least share of the known resources it crosses
      for (const auto& [resource, rate] : resources_of(f, rule))
        if (rate > 0) {
          const double part = rate / sharing[{g.round, resource}];
          share = share > 0 ? std::min(share, part) : part;
        }
      known = known && share > 0;
      out_of[f.from] += share;
      into[f.to] += share;
    }
    if (!known || out_of.empty()) continue;
    if (g.operation == "incast")
      g.expected_gbps = into[g.leader];
    else if (g.operation == "one-to-many")
      g.expected_gbps = out_of[g.leader];
    else  // all-to-all: the slowest rank's egress; a pair: the slower direction
      g.expected_gbps = std::min_element(out_of.begin(), out_of.end(), [](const auto& a, const auto& b) {
                          return a.second < b.second;
                        })->second;
  }
}

std::optional<RunVerdict> judge_expected_rates(const LoadReport& report, const RateRule& rule) {
  std::vector<PathShare> shares;
  for (const GroupRate& g : report.groups)
    shares.push_back({fmt::format("{} {}", g.operation, group_name(g)), g.gbps, g.expected_gbps});
  return judge_path_shares(shares, rule, "group");
}

std::shared_ptr<const SummaryExhibit> load_exhibit(LoadReport report) {
  return std::make_shared<LoadExhibit>(std::move(report));
}

}  // namespace fabricbench
