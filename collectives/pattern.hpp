// SPDX-License-Identifier: Apache-2.0
// The data every rank sends, and where each output element must come from. Shared by the host
// checker (MPI backend) and the GPU fill/check kernels (NCCL backend), hence FB_HD.
//
// Values are small integers that depend on rank and index (never zeros or constants), so sums,
// products, minima and maxima are exact in every floating type for moderate rank counts, and the
// integer wrap-around of large rank counts is reproduced exactly by computing in int64 and
// converting to the element type (modular since C++20).
#pragma once

#include <cstdint>

#include "collectives/collective.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench::collectives {

/// The input element `index` of `rank`'s send buffer, as an integer code.
/// sum/avg: 1..5; prod: mostly 1 with a 2 every eighth (rank + index), so products stay small;
/// min/max: 0..16, shifted to -8..8 for signed and floating types to exercise negatives.
FB_HD inline std::int64_t input_code(ReduceOp op, bool allows_negative, int rank, std::uint64_t index) {
  const std::uint64_t r = static_cast<std::uint64_t>(rank);
  switch (op) {
    case ReduceOp::kProd: return (index + r) % 8 == 0 ? 2 : 1;
    case ReduceOp::kMin:
    case ReduceOp::kMax: {
      const auto code = static_cast<std::int64_t>((r * 5 + index * 3) % 17);
      return allows_negative ? code - 8 : code;
    }
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
    default: return static_cast<std::int64_t>((r * 3 + index * 7) % 5) + 1;
  }
}

/// Where output element `out_index` of `rank` comes from: one input element (rank, index), or the
/// reduction over every rank of input element `index` (rank = -1).
struct Source {
  int rank;
  std::uint64_t index;
  FB_HD bool reduced() const { return rank < 0; }
};

/// `count` is the collective's count argument (per-peer chunk for alltoall, per-rank share for
/// the gather-type collectives); `out_index` counts from the start of the output view.
FB_HD inline Source source_of(SourceRule rule, std::uint64_t out_index, int rank, int ranks, int root,
                              std::uint64_t count) {
  const std::uint64_t base = rule.own_chunk ? static_cast<std::uint64_t>(rank) * count : 0;
  switch (rule.from) {
    case SourceRule::From::kRoot: return {root, base + out_index};
    case SourceRule::From::kPrevious: return {(rank - 1 + ranks) % ranks, base + out_index};
    case SourceRule::From::kChunkOwner: return {static_cast<int>(out_index / count), base + out_index % count};
    case SourceRule::From::kAllRanks:
    default: return {-1, base + out_index};
  }
}

/// Reduces the integer codes of input `index` over all ranks (exact; prod stays below 2^(ranks/8+1)).
/// For avg this returns the sum: the caller divides.
FB_HD inline std::int64_t reduced_code(ReduceOp op, bool allows_negative, int ranks, std::uint64_t index) {
  std::int64_t acc = input_code(op, allows_negative, 0, index);
  for (int r = 1; r < ranks; ++r) {
    const std::int64_t v = input_code(op, allows_negative, r, index);
    switch (op) {
      case ReduceOp::kProd: acc *= v; break;
      case ReduceOp::kMin: acc = v < acc ? v : acc; break;
      case ReduceOp::kMax: acc = v > acc ? v : acc; break;
      default: acc += v; break;
    }
  }
  return acc;
}

/// Largest magnitude an input code of `op` can have: bounds the rounding error of floating sums.
FB_HD inline double max_input_magnitude(ReduceOp op) {
  return op == ReduceOp::kMin || op == ReduceOp::kMax ? 8.0 : 5.0;
}

}  // namespace fabricbench::collectives
