// SPDX-License-Identifier: Apache-2.0
#include "common/summary.hpp"

namespace fabricbench {

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
