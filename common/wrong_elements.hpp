// SPDX-License-Identifier: Apache-2.0
// The wrong elements a run's rows found, as its totals and every reader count them.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "common/row.hpp"

namespace fabricbench {

/// The sum of the rows' wrong elements (-1, not checked, counts none), held at the largest
/// int64 rather than wrapping (a damaged file can claim any count).
inline std::int64_t wrong_elements(std::span<const ResultRow> rows) {
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  std::int64_t sum = 0;
  for (const ResultRow& row : rows)
    if (row.wrong > 0) sum = row.wrong > kMost - sum ? kMost : sum + row.wrong;
  return sum;
}

/// A run's totals.wrong_total as the benchmarks write it: wrong_elements(), or -1 where no row
/// was checked (-c 0; an nccl-tests log's N/A).
inline std::int64_t wrong_total_of(std::span<const ResultRow> rows) {
  for (const ResultRow& row : rows)
    if (row.wrong >= 0) return wrong_elements(rows);
  return -1;
}

}  // namespace fabricbench
