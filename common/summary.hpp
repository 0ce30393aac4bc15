// SPDX-License-Identifier: Apache-2.0
// A run's headline numbers, better than nccl-tests' "Avg bus bandwidth" alone.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/row.hpp"

namespace fabricbench {

/// avg_busbw_bytes_per_s (nccl-tests' average over every row), peak_busbw_bytes_per_s with
/// peak_size_bytes, the smallest size's mean time (smallest_size_time_s, smallest_size_bytes) and,
/// for multi-node rows, slowest_host_rows {host: rows where it was the slowest}.
/// Empty object for no rows.
nlohmann::json summarize_rows(const std::vector<ResultRow>& rows);

}  // namespace fabricbench
