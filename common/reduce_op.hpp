// SPDX-License-Identifier: Apache-2.0
// Reduction operations and the policy that folds per-rank timings into one number.
#pragma once

#include <span>
#include <string_view>

namespace fabricbench {

enum class ReduceOp { kSum, kProd, kMin, kMax, kAvg };

std::span<const ReduceOp> all_reduce_ops();
std::string_view name_of(ReduceOp op);
/// sum, prod, min, max, avg (nccl-tests' names). Throws UsageError naming `flag`.
ReduceOp parse_reduce_op(std::string_view text, std::string_view flag);

/// How per-rank times of one iteration become the iteration's time. nccl-tests' -a numbers:
/// 0 rank0, 1 avg (nccl-tests' default), 2 min, 3 max (ours: the slowest rank finishes the
/// collective, so max is what an application waits for).
enum class RankReduction { kRank0, kAvg, kMin, kMax };

std::string_view name_of(RankReduction policy);
/// Accepts the names above or nccl-tests' digits 0..3.
RankReduction parse_rank_reduction(std::string_view text, std::string_view flag);

}  // namespace fabricbench
