// SPDX-License-Identifier: Apache-2.0
// Absolute gates, as nccl-tests' NCCL_TESTS_MIN_BW but judged where it means something: on the
// plateau of each curve (the sizes from the first one reaching 90 % of the peak upwards), never
// on small sizes, which no fabric runs at line rate. --expect-busbw for collectives (GB/s, per
// series; per cell in a link matrix), --expect-gbps for verbs (Gb/s, the worst pair at each size).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/row.hpp"
#include "common/summary.hpp"

namespace fabricbench {

/// The plateau of a curve of (size, figure): the mean figure of the sizes from the first one
/// reaching 90 % of the peak upwards.
struct Plateau {
  double value = 0;
  std::uint64_t from_size = 0;
  std::size_t sizes = 0;
};

/// None for an empty curve or one without a positive figure.
std::optional<Plateau> plateau_of(std::vector<std::pair<std::uint64_t, double>> curve);

/// --expect-busbw: PASS when every series' (every cell's, in a link matrix) plateau busbw is at
/// least `expected_bytes_per_s`; FAIL naming each one below, or when there is nothing to judge.
RunVerdict judge_expected_busbw(const std::vector<ResultRow>& rows, double expected_bytes_per_s);

/// --expect-gbps: the worst pair's rate at each size, its plateau at least `expected_gbps`.
RunVerdict judge_expected_gbps(const std::vector<ResultRow>& pair_rows, double expected_gbps);

}  // namespace fabricbench
