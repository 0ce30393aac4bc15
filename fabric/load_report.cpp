// SPDX-License-Identifier: Apache-2.0
#include "fabric/load_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/stats.hpp"

namespace fabricbench {
namespace {

double gbps_of(const ResultRow& row) { return row.busbw_median_bytes_per_s * 8 / 1e9; }

std::string group_name(const GroupRate& g) {
  if (g.operation == "incast") return fmt::format("into {} from {}", g.leader, g.others);
  if (g.operation == "one-to-many") return fmt::format("from {} to {}", g.leader, g.others);
  if (g.operation == "all-to-all") return fmt::format("{}+{}", g.leader, g.others);
  return fmt::format("{} - {}", g.leader, g.others);
}

void print_groups(std::FILE* out, const LoadReport& r) {
  std::vector<double> rates;
  for (const GroupRate& g : r.groups) rates.push_back(g.gbps);
  const double median = median_of(rates);
  fmt::print(out, "# Load {}: {}; each group's busbw at {} B{}:\n", r.pattern, r.note, r.size_bytes,
             r.pattern == "incast"        ? " (the target's ingress)"
             : r.pattern == "one-to-many" ? " (the source's egress)"
                                          : "");
  for (const GroupRate& g : r.groups)
    fmt::print(out, "#   round {}: {} {} {:.3f} Gb/s ({:.2f} x the median)\n", g.round, g.operation, group_name(g),
               g.gbps, median > 0 ? g.gbps / median : 0.0);
  if (r.pattern == "bisection") {
    double sum = 0;
    for (double rate : rates) sum += rate;
    fmt::print(out, "#   bisection: {} pair(s) at once, {:.3f} Gb/s in all (each way)\n", rates.size(), sum);
  } else if (r.groups.size() > 1) {
    fmt::print(out, "#   median {:.3f} Gb/s over {} group(s)\n", median, r.groups.size());
  }
}

void print_victims(std::FILE* out, const LoadReport& r) {
  fmt::print(out, "# Congestion impact ({}; victim under load / alone, GPCNeT's factor: above 1 the load slows it):\n",
             r.note);
  for (const VictimImpact& v : r.victims)
    fmt::print(out,
               "#   {} under {}: latency at {} B {:.1f} -> {:.1f} us: {:.2f} x; bandwidth at {} B {:.3f} -> {:.3f} "
               "Gb/s: {:.2f} x\n",
               v.victim, v.load == "none" ? "no load (alone again)" : v.load, v.small_bytes, v.latency_alone_s * 1e6,
               v.latency_loaded_s * 1e6, v.latency_factor(), v.large_bytes, v.gbps_alone, v.gbps_loaded,
               v.bandwidth_factor());
}

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
                        {"gbps", g.gbps}});
    for (const VictimImpact& v : r_.victims)
      victims.push_back({{"victim", v.victim},
                         {"load", v.load},
                         {"small_bytes", v.small_bytes},
                         {"large_bytes", v.large_bytes},
                         {"latency_alone_s", v.latency_alone_s},
                         {"latency_loaded_s", v.latency_loaded_s},
                         {"gbps_alone", v.gbps_alone},
                         {"gbps_loaded", v.gbps_loaded},
                         {"latency_factor", v.latency_factor()},
                         {"bandwidth_factor", v.bandwidth_factor()}});
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
    for (const VictimImpact& v : r_.victims) {
      gauges.push_back({"fabricbench_congestion_impact_factor",
                        help,
                        {{"victim", v.victim}, {"load", v.load}, {"measure", "latency"}},
                        v.latency_factor()});
      gauges.push_back({"fabricbench_congestion_impact_factor",
                        help,
                        {{"victim", v.victim}, {"load", v.load}, {"measure", "bandwidth"}},
                        v.bandwidth_factor()});
    }
    return gauges;
  }

 private:
  LoadReport r_;
};

}  // namespace

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
    if (!victims.contains(name)) order.push_back(name);
    VictimImpact& v = victims[name];
    v.victim = name;
    const bool alone = load == "alone";
    if (!alone) v.load = load;
    if (v.small_bytes == 0 || row.size_bytes <= v.small_bytes) {
      v.small_bytes = row.size_bytes;
      (alone ? v.latency_alone_s : v.latency_loaded_s) = row.time_s.median;
    }
    if (row.size_bytes >= v.large_bytes) {
      v.large_bytes = row.size_bytes;
      (alone ? v.gbps_alone : v.gbps_loaded) = gbps_of(row);
    }
  }
  for (const std::string& name : order) report.victims.push_back(victims[name]);
  return report;
}

std::shared_ptr<const SummaryExhibit> load_exhibit(LoadReport report) {
  return std::make_shared<LoadExhibit>(std::move(report));
}

}  // namespace fabricbench
