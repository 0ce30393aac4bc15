// SPDX-License-Identifier: Apache-2.0
#include "common/dtype.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/reduce_op.hpp"

namespace fabricbench {
namespace {

TEST(DataType, NamesRoundTripAndSizesAreRight) {
  for (DataType t : all_data_types()) EXPECT_EQ(parse_data_type(name_of(t), "-d"), t);
  EXPECT_EQ(parse_data_type("int", "-d"), DataType::kInt32);
  EXPECT_EQ(parse_data_type("fp16", "-d"), DataType::kFloat16);
  EXPECT_EQ(size_of(DataType::kBfloat16), 2u);
  EXPECT_EQ(size_of(DataType::kUint64), 8u);
  EXPECT_TRUE(is_signed_integer(DataType::kInt8));
  EXPECT_FALSE(is_signed_integer(DataType::kUint8));
  EXPECT_DOUBLE_EQ(unit_roundoff(DataType::kFloat32), 0x1p-24);
  EXPECT_THROW(parse_data_type("float128", "-d"), UsageError);
}

TEST(ReduceOp, ParsesNamesAndRejectsOthers) {
  for (ReduceOp op : all_reduce_ops()) EXPECT_EQ(parse_reduce_op(name_of(op), "-o"), op);
  EXPECT_THROW(parse_reduce_op("xor", "-o"), UsageError);
}

TEST(RankReduction, AcceptsNccltestsDigitsAndNames) {
  EXPECT_EQ(parse_rank_reduction("3", "-a"), RankReduction::kMax);
  EXPECT_EQ(parse_rank_reduction("1", "-a"), RankReduction::kAvg);
  EXPECT_EQ(parse_rank_reduction("rank0", "-a"), RankReduction::kRank0);
  EXPECT_THROW(parse_rank_reduction("4", "-a"), UsageError);
}

}  // namespace
}  // namespace fabricbench
