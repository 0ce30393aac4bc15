// SPDX-License-Identifier: Apache-2.0
// Message sizes: parsing "64K"-style values, human labels, and the size sweep of a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricbench {

/// Parses a positive byte count with an optional binary suffix: 8, 64K, 64KiB, 1M, 8G (K = 1024,
/// as nccl-tests). `flag` names the option in the error. Throws UsageError on zero, negative or
/// garbled input.
std::uint64_t parse_bytes(std::string_view text, std::string_view flag);

/// "8 B", "64 KiB", "1.5 MiB": for tables and messages, never for files.
std::string format_bytes(std::uint64_t bytes);

/// How a run walks from min to max: multiply by `factor`, or add `step_bytes`.
struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64ull << 20;
  double factor = 2.0;                      ///< used when step_bytes is empty
  std::optional<std::uint64_t> step_bytes;  ///< -i: arithmetic sweep
};

/// The most sizes one sweep may have: -i 4 from 4 B to 1 GiB would be 268 million (and as many
/// rows per placement); nccl-tests' widest default sweep has 31.
inline constexpr std::size_t kMaxSweepSizes = 10000;

/// The sizes of a sweep, ascending and without repeats; min first, never past max. Throws
/// UsageError past kMaxSweepSizes sizes.
std::vector<std::uint64_t> make_sweep(const SweepSpec& spec);

}  // namespace fabricbench
