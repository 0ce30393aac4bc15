// SPDX-License-Identifier: Apache-2.0
// A run's headline numbers, better than nccl-tests' "Avg bus bandwidth" alone (which weighs an
// 8 B row like an 8 GB one): peak, the large-message plateau, where the curve gets there, and the
// small-message latency.
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common/row.hpp"

namespace fabricbench {

/// The figures of one series: rows of one collective, type, op, placement, root, pair and settings.
struct SeriesFigures {
  std::size_t rows = 0;
  double peak_busbw = 0;  ///< B/s
  std::uint64_t peak_size = 0;
  double plateau_busbw = 0;  ///< mean busbw of the sizes from the first one reaching 90 % of peak upwards
  std::uint64_t plateau_from_size = 0;
  std::uint64_t size_at_half_peak = 0;        ///< smallest size reaching 50 % of peak busbw
  std::uint64_t size_at_90_percent_peak = 0;  ///< smallest size reaching 90 % of peak busbw
  double small_message_time_s = 0;            ///< mean time at the smallest size
  std::uint64_t small_message_size = 0;
};

/// "all_reduce float sum out-of-place": the series a row belongs to.
std::string series_of(const ResultRow& row);

/// Figures of `rows`, all of one series (any order). Zeros for no rows.
SeriesFigures series_figures(std::vector<ResultRow> rows);

/// avg_busbw_bytes_per_s (nccl-tests' average over every row), peak_busbw_bytes_per_s with
/// peak_size_bytes, the smallest size's mean time (smallest_size_time_s, smallest_size_bytes),
/// the first series' figures (series, plateau_busbw_bytes_per_s, plateau_from_size_bytes,
/// size_at_50_percent_peak_bytes, size_at_90_percent_peak_bytes) and, for multi-node rows,
/// slowest_host_rows {host: rows where it was the slowest}. Empty object for no rows.
nlohmann::json summarize_rows(const std::vector<ResultRow>& rows);

}  // namespace fabricbench
