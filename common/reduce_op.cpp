// SPDX-License-Identifier: Apache-2.0
#include "common/reduce_op.hpp"

#include <fmt/format.h>

#include <array>

#include "common/error.hpp"

namespace fabricbench {
namespace {

constexpr std::array<ReduceOp, 5> kOps{ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAvg};
constexpr std::array<std::string_view, 5> kOpNames{"sum", "prod", "min", "max", "avg"};
constexpr std::array<std::string_view, 4> kPolicyNames{"rank0", "avg", "min", "max"};

}  // namespace

std::span<const ReduceOp> all_reduce_ops() { return kOps; }
std::string_view name_of(ReduceOp op) { return kOpNames[static_cast<std::size_t>(op)]; }

ReduceOp parse_reduce_op(std::string_view text, std::string_view flag) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i)
    if (text == kOpNames[i]) return kOps[i];
  throw UsageError(fmt::format("{}: unknown reduction '{}'; valid: sum, prod, min, max, avg, all", flag, text));
}

std::string_view name_of(RankReduction policy) { return kPolicyNames[static_cast<std::size_t>(policy)]; }

RankReduction parse_rank_reduction(std::string_view text, std::string_view flag) {
  for (std::size_t i = 0; i < kPolicyNames.size(); ++i) {
    if (text == kPolicyNames[i] || (text.size() == 1 && text[0] == static_cast<char>('0' + i)))
      return static_cast<RankReduction>(i);
  }
  throw UsageError(fmt::format("{}: unknown rank reduction '{}'; valid: rank0|0, avg|1, min|2, max|3", flag, text));
}

}  // namespace fabricbench
