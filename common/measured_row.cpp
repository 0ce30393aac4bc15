// SPDX-License-Identifier: Apache-2.0
#include "common/measured_row.hpp"

namespace fabricbench {

void record_measurement(ResultRow& row, const Measurement& m, int slowest_world_rank,
                        const std::vector<std::string>& host_of_rank) {
  row.samples = m.seconds_per_operation.size();
  row.batch = m.batch;
  row.stop_reason = m.stop_reason;
  row.time_s = m.summary;
  row.slowest_rank = slowest_world_rank;
  row.slowest_host = host_of_rank.at(static_cast<std::size_t>(slowest_world_rank));
}

void record_rates(ResultRow& row, double algbw_bytes, double busbw_factor) {
  auto rate = [algbw_bytes](double seconds) { return seconds > 0 ? algbw_bytes / seconds : 0; };
  row.busbw_factor = busbw_factor;
  row.algbw_mean_bytes_per_s = rate(row.time_s.mean);
  row.algbw_median_bytes_per_s = rate(row.time_s.median);
  row.busbw_mean_bytes_per_s = row.algbw_mean_bytes_per_s * busbw_factor;
  row.busbw_median_bytes_per_s = row.algbw_median_bytes_per_s * busbw_factor;
  row.busbw_peak_bytes_per_s = rate(row.time_s.min) * busbw_factor;
}

}  // namespace fabricbench
