// SPDX-License-Identifier: Apache-2.0
#include "common/summary.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabricbench {

std::string series_of(const ResultRow& r) {
  std::string series = fmt::format("{} {} {} {}", r.collective, r.dtype, r.op, r.placement);
  if (r.root >= 0) series += fmt::format(" root {}", r.root);
  if (r.pair >= 0) series += fmt::format(" pair {}", r.pair);
  if (!r.settings.empty()) series += " [" + r.settings + "]";
  return series;
}

SeriesFigures series_figures(std::vector<ResultRow> rows) {
  SeriesFigures f;
  f.rows = rows.size();
  if (rows.empty()) return f;
  std::sort(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) { return a.size_bytes < b.size_bytes; });
  f.small_message_size = rows.front().size_bytes;
  f.small_message_time_s = rows.front().time_s.mean;
  for (const ResultRow& r : rows)
    if (r.busbw_mean_bytes_per_s > f.peak_busbw) {
      f.peak_busbw = r.busbw_mean_bytes_per_s;
      f.peak_size = r.size_bytes;
    }
  if (f.peak_busbw <= 0) return f;
  for (const ResultRow& r : rows) {
    if (f.size_at_half_peak == 0 && r.busbw_mean_bytes_per_s >= 0.5 * f.peak_busbw) f.size_at_half_peak = r.size_bytes;
    if (f.size_at_90_percent_peak == 0 && r.busbw_mean_bytes_per_s >= 0.9 * f.peak_busbw)
      f.size_at_90_percent_peak = r.size_bytes;
  }
  double sum = 0;
  std::size_t n = 0;
  for (const ResultRow& r : rows)
    if (r.size_bytes >= f.size_at_90_percent_peak) {
      sum += r.busbw_mean_bytes_per_s;
      ++n;
    }
  f.plateau_busbw = sum / static_cast<double>(n);
  f.plateau_from_size = f.size_at_90_percent_peak;
  return f;
}

nlohmann::json summarize_rows(const std::vector<ResultRow>& rows) {
  nlohmann::json s = nlohmann::json::object();
  if (rows.empty()) return s;
  double sum = 0;
  const ResultRow* peak = &rows.front();
  const ResultRow* smallest = &rows.front();
  for (const ResultRow& r : rows) {
    sum += r.busbw_mean_bytes_per_s;
    if (r.busbw_mean_bytes_per_s > peak->busbw_mean_bytes_per_s) peak = &r;
    if (r.size_bytes < smallest->size_bytes) smallest = &r;
  }
  s["avg_busbw_bytes_per_s"] = sum / static_cast<double>(rows.size());
  s["peak_busbw_bytes_per_s"] = peak->busbw_mean_bytes_per_s;
  s["peak_size_bytes"] = peak->size_bytes;
  s["smallest_size_bytes"] = smallest->size_bytes;
  s["smallest_size_time_s"] = smallest->time_s.mean;
  const std::string first_series = series_of(rows.front());
  std::vector<ResultRow> series;
  for (const ResultRow& r : rows)
    if (series_of(r) == first_series) series.push_back(r);
  const SeriesFigures f = series_figures(series);
  s["series"] = first_series;
  s["plateau_busbw_bytes_per_s"] = f.plateau_busbw;
  s["plateau_from_size_bytes"] = f.plateau_from_size;
  s["size_at_50_percent_peak_bytes"] = f.size_at_half_peak;
  s["size_at_90_percent_peak_bytes"] = f.size_at_90_percent_peak;
  // Multi-node: how often each node held the others back (its rank had the most timed seconds).
  nlohmann::json slowest = nlohmann::json::object();
  bool several_hosts = false;
  for (const ResultRow& r : rows) {
    several_hosts = several_hosts || r.hosts > 1;
    if (!r.slowest_host.empty()) slowest[r.slowest_host] = slowest.value(r.slowest_host, 0) + 1;
  }
  if (several_hosts && !slowest.empty()) s["slowest_host_rows"] = slowest;
  return s;
}

}  // namespace fabricbench
