// SPDX-License-Identifier: Apache-2.0
#include "results/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace fabricbench::results {
namespace {

double value_of(const ResultRow& row, Metric metric) {
  switch (metric) {
    case Metric::kBusbw: return row.busbw_mean_bytes_per_s;
    case Metric::kAlgbw: return row.algbw_mean_bytes_per_s;
    case Metric::kTime: return row.time_s.mean;
  }
  return 0;
}

/// Relative standard deviation of a row's samples, when it has any (imports of tools that keep
/// one average do not).
std::pair<double, bool> noise_of(const ResultRow& row) {
  if (row.samples < 2 || row.time_s.mean <= 0) return {0, false};
  return {row.time_s.stdev / row.time_s.mean, true};
}

std::string text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return {};
  return value.dump();
}

/// The comparable items of a context, ours or an import's, flattened to text.
std::map<std::string, std::string> comparable(const nlohmann::json& context) {
  std::map<std::string, std::string> items;
  if (!context.is_object()) return items;
  items["tool"] = context.value("tool", std::string("fabricbench"));
  for (const char* key : {"ranks", "backend", "mpi_library", "fabricbench_version", "kernel", "cpu_model"})
    if (context.contains(key)) items[key] = text_of(context[key]);
  if (context.contains("hosts") && context["hosts"].is_object()) {
    std::string hosts;
    for (const auto& [host, ranks] : context["hosts"].items()) hosts += (hosts.empty() ? "" : ",") + host;
    items["hosts"] = hosts;
    items["host count"] = std::to_string(context["hosts"].size());
  }
  if (context.contains("device") && context["device"].is_object())
    items["rdma device"] = context["device"].value("name", std::string());
  if (context.contains("rank_context") && context["rank_context"].is_array() && !context["rank_context"].empty()) {
    const auto& rank0 = context["rank_context"][0];
    if (rank0.contains("nccl_library_version")) items["nccl version"] = text_of(rank0["nccl_library_version"]);
    if (rank0.contains("cuda_driver_version")) items["cuda driver"] = text_of(rank0["cuda_driver_version"]);
    if (rank0.contains("gpus") && rank0["gpus"].is_array() && !rank0["gpus"].empty() &&
        rank0["gpus"][0].contains("gpu_name"))
      items["gpu model"] = text_of(rank0["gpus"][0]["gpu_name"]);
  }
  return items;
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame: return "SAME";
    case Verdict::kFaster: return "FASTER";
    case Verdict::kSlower: return "SLOWER";
    case Verdict::kUnsure: return "UNSURE";
  }
  return "?";
}

const char* metric_name(Metric metric) {
  switch (metric) {
    case Metric::kBusbw: return "busbw";
    case Metric::kAlgbw: return "algbw";
    case Metric::kTime: return "time";
  }
  return "?";
}

Metric metric_from_name(const std::string& name) {
  if (name == "busbw") return Metric::kBusbw;
  if (name == "algbw") return Metric::kAlgbw;
  if (name == "time") return Metric::kTime;
  throw UsageError(fmt::format("--metric '{}': valid metrics are busbw, algbw, time", name));
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const RowComparison& r) { return r.verdict == verdict; }));
}

bool is_latency_row(const ResultRow& row) { return row.benchmark.ends_with("_lat"); }

Verdict decide(double speedup, double noise, double threshold, double sigmas) {
  const double change = std::abs(speedup - 1);
  if (change <= threshold) return Verdict::kSame;
  if (change <= sigmas * noise) return Verdict::kUnsure;
  return speedup > 1 ? Verdict::kFaster : Verdict::kSlower;
}

std::string match_key(const ResultRow& r, const CompareOptions& options) {
  std::string key;
  for (const Column* column : identity_columns()) {
    if (options.ignore_settings && column->name == "settings") continue;
    key += std::visit([](const auto& v) { return fmt::format("{}|", v); }, column->get(r));
  }
  return options.match_tags ? key + r.tags.text() : key;
}

std::vector<ContextDifference> context_differences(const nlohmann::json& base, const nlohmann::json& fresh) {
  std::vector<ContextDifference> differences;
  const auto a = comparable(base), b = comparable(fresh);
  for (const auto& [item, value] : a) {
    const auto other = b.find(item);
    if (other != b.end() && !value.empty() && !other->second.empty() && value != other->second)
      differences.push_back({item, value, other->second});
  }
  return differences;
}

Comparison compare_runs(const StoredRun& base, const StoredRun& fresh, const CompareOptions& options) {
  Comparison c;
  c.context_differences = context_differences(base.context, fresh.context);
  std::map<std::string, std::size_t> fresh_by_key;
  for (std::size_t i = 0; i < fresh.rows.size(); ++i) fresh_by_key.emplace(match_key(fresh.rows[i], options), i);
  std::vector<bool> used(fresh.rows.size(), false);
  for (const ResultRow& row : base.rows) {
    const auto found = fresh_by_key.find(match_key(row, options));
    if (found == fresh_by_key.end() || used[found->second]) {
      c.only_base.push_back(row);
      continue;
    }
    used[found->second] = true;
    RowComparison rc;
    rc.base = row;
    rc.fresh = fresh.rows[found->second];
    rc.metric = options.metric_given ? options.metric : (is_latency_row(row) ? Metric::kTime : Metric::kBusbw);
    // Collectives on one rank move no bytes between ranks (busbw factor 0): fall back to time.
    if (rc.metric == Metric::kBusbw && (row.busbw_mean_bytes_per_s <= 0 || rc.fresh.busbw_mean_bytes_per_s <= 0))
      rc.metric = Metric::kTime;
    rc.base_value = value_of(row, rc.metric);
    rc.new_value = value_of(rc.fresh, rc.metric);
    if (rc.base_value <= 0 || rc.new_value <= 0) {
      c.only_base.push_back(row);  // nothing measurable to compare
      continue;
    }
    rc.speedup = rc.metric == Metric::kTime ? rc.base_value / rc.new_value : rc.new_value / rc.base_value;
    const auto [noise_a, known_a] = noise_of(row);
    const auto [noise_b, known_b] = noise_of(rc.fresh);
    rc.noise = std::sqrt(noise_a * noise_a + noise_b * noise_b);
    rc.noise_known = known_a || known_b;
    rc.verdict = decide(rc.speedup, rc.noise, options.threshold, options.noise_sigmas);
    c.rows.push_back(std::move(rc));
  }
  for (std::size_t i = 0; i < fresh.rows.size(); ++i)
    if (!used[i]) c.only_new.push_back(fresh.rows[i]);
  if (c.rows.empty())
    throw InputError(fmt::format(
        "{} and {} have no rows in common ({} and {} rows): different collectives, types, sizes, rank counts or "
        "settings? (--ignore-settings, --metric)",
        base.path, fresh.path, base.rows.size(), fresh.rows.size()));

  double log_sum = 0;
  for (const RowComparison& r : c.rows)
    if (r.base.size_bytes >= options.cutoff_bytes) {
      log_sum += std::log(r.speedup);
      ++c.geomean_rows;
    }
  if (c.geomean_rows == 0) {
    c.geomean_over_all_sizes = true;
    for (const RowComparison& r : c.rows) log_sum += std::log(r.speedup);
    c.geomean_rows = c.rows.size();
  }
  c.geomean_speedup = std::exp(log_sum / static_cast<double>(c.geomean_rows));
  std::vector<std::size_t> order(c.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return c.rows[a].speedup < c.rows[b].speedup; });
  order.resize(std::min<std::size_t>(5, order.size()));
  c.worst = order;
  return c;
}

}  // namespace fabricbench::results
