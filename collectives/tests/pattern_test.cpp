// SPDX-License-Identifier: Apache-2.0
#include "collectives/pattern.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collectives/catalog.hpp"
#include "collectives/host_data.hpp"

namespace fabricbench::collectives {
namespace {

TEST(Pattern, InputDependsOnRankAndIndexAndIsNeverConstant) {
  EXPECT_NE(input_code(ReduceOp::kSum, true, 0, 0), input_code(ReduceOp::kSum, true, 1, 0));
  EXPECT_NE(input_code(ReduceOp::kSum, true, 0, 0), input_code(ReduceOp::kSum, true, 0, 1));
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_GE(input_code(ReduceOp::kSum, false, 3, i), 1);
    EXPECT_LE(input_code(ReduceOp::kSum, false, 3, i), 5);
    EXPECT_GE(input_code(ReduceOp::kMin, false, 3, i), 0);
  }
  EXPECT_EQ(input_code(ReduceOp::kMin, true, 0, 0), -8);  // negatives exercised for signed types
}

TEST(Pattern, ReducedCodesHandWorkedForThreeRanks) {
  // sum codes at index 0: ranks 0,1,2 -> (0)%5+1=1, (3)%5+1=4, (6)%5+1=2 -> 7
  EXPECT_EQ(reduced_code(ReduceOp::kSum, false, 3, 0), 7);
  // prod at index 0: rank 0 has (0+0)%8==0 -> 2, ranks 1 and 2 -> 1
  EXPECT_EQ(reduced_code(ReduceOp::kProd, false, 3, 0), 2);
  // max at index 1 (unsigned): (0*5+3)%17=3, (5+3)%17=8, (10+3)%17=13 -> 13; min -> 3
  EXPECT_EQ(reduced_code(ReduceOp::kMax, false, 3, 1), 13);
  EXPECT_EQ(reduced_code(ReduceOp::kMin, false, 3, 1), 3);
}

TEST(Pattern, SourcesOfEachCollective) {
  // all_gather, 3 ranks, count 4: output 9 is rank 2's element 1.
  EXPECT_EQ(source_of(kAllGather.source, 9, 0, 3, 0, 4).rank, 2);
  EXPECT_EQ(source_of(kAllGather.source, 9, 0, 3, 0, 4).index, 1u);
  // reduce_scatter: rank 1's output 2 is the reduction of input 1*4+2.
  EXPECT_TRUE(source_of(kReduceScatter.source, 2, 1, 3, 0, 4).reduced());
  EXPECT_EQ(source_of(kReduceScatter.source, 2, 1, 3, 0, 4).index, 6u);
  // alltoall: rank 1's output chunk 2, element 3 is rank 2's input 1*4+3.
  EXPECT_EQ(source_of(kAlltoall.source, 11, 1, 3, 0, 4).rank, 2);
  EXPECT_EQ(source_of(kAlltoall.source, 11, 1, 3, 0, 4).index, 7u);
  // sendrecv: rank 0 receives from rank 2 of 3.
  EXPECT_EQ(source_of(kSendrecv.source, 5, 0, 3, 0, 4).rank, 2);
  EXPECT_EQ(source_of(kBroadcast.source, 5, 0, 3, 1, 4).rank, 1);
  EXPECT_EQ(output_span(kReduce, Shape{0, 3, 1, 4}, false, Library::kMpi).elements, 0u);
  EXPECT_EQ(output_span(kReduce, Shape{1, 3, 1, 4}, false, Library::kNccl).elements, 4u);
}

TEST(Pattern, GatherAndScatterHandWorked) {
  // gather, 3 ranks, count 4, root 1: the root's output 9 is rank 2's element 1; others hold none.
  EXPECT_EQ(source_of(kGather.source, 9, 1, 3, 1, 4).rank, 2);
  EXPECT_EQ(source_of(kGather.source, 9, 1, 3, 1, 4).index, 1u);
  EXPECT_EQ(output_span(kGather, Shape{0, 3, 1, 4}, false, Library::kMpi).elements, 0u);
  EXPECT_EQ(output_span(kGather, Shape{1, 3, 1, 4}, false, Library::kMpi).elements, 12u);
  // In place the input sits at rank x count of the receive buffer.
  EXPECT_EQ(input_span(kGather, Shape{2, 3, 1, 4}, true).offset, 8u);
  // scatter, root 1: rank 2's output 3 is the root's input 2*4+3; in place it lands at 2*4.
  EXPECT_EQ(source_of(kScatter.source, 3, 2, 3, 1, 4).rank, 1);
  EXPECT_EQ(source_of(kScatter.source, 3, 2, 3, 1, 4).index, 11u);
  EXPECT_EQ(output_span(kScatter, Shape{2, 3, 1, 4}, true, Library::kNccl).offset, 8u);
  EXPECT_EQ(output_span(kScatter, Shape{2, 3, 1, 4}, false, Library::kMpi).offset, 0u);
}

TEST(Pattern, ReduceScatterInPlaceOutputDiffersBetweenLibraries) {
  EXPECT_EQ(output_span(kReduceScatter, Shape{2, 3, 0, 4}, true, Library::kNccl).offset, 8u);
  EXPECT_EQ(output_span(kReduceScatter, Shape{2, 3, 0, 4}, true, Library::kMpi).offset, 0u);
}

TEST(HostCheck, AcceptsTheExactResultAndCountsEachWrongElement) {
  // An all_reduce result of 2 ranks built by hand from the input codes.
  const DataLayout layout{kAllReduce.source, DataType::kInt32, ReduceOp::kSum, 0, 2, 0, 64};
  std::vector<std::int32_t> out(64);
  for (std::uint64_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::int32_t>(input_code(ReduceOp::kSum, true, 0, i) + input_code(ReduceOp::kSum, true, 1, i));
  EXPECT_EQ(count_wrong_host(layout, out.data(), out.size()), 0u);
  out[5] += 1;
  out[63] = 0;
  EXPECT_EQ(count_wrong_host(layout, out.data(), out.size()), 2u);
}

TEST(HostCheck, Int8SumWrapsLikeTheReduction) {
  // 64 ranks of codes 1..5 overflow int8; the expected value wraps modulo 256 as MPI's does.
  const DataLayout layout{kAllReduce.source, DataType::kInt8, ReduceOp::kSum, 0, 64, 0, 1};
  const std::int64_t exact = reduced_code(ReduceOp::kSum, true, 64, 0);
  ASSERT_GT(exact, 127);
  const auto wrapped = static_cast<std::int8_t>(exact);
  EXPECT_EQ(count_wrong_host(layout, &wrapped, 1), 0u);
}

TEST(HostCheck, FloatToleranceGrowsWithRanksButStaysTight) {
  EXPECT_DOUBLE_EQ(tolerance(DataType::kInt32, ReduceOp::kSum, 8, 100), 0);
  EXPECT_LT(tolerance(DataType::kFloat32, ReduceOp::kSum, 8, 40), 1e-4);
  EXPECT_GT(tolerance(DataType::kFloat32, ReduceOp::kSum, 8, 40), tolerance(DataType::kFloat32, ReduceOp::kSum, 2, 40));
  const DataLayout layout{kAllReduce.source, DataType::kFloat32, ReduceOp::kSum, 0, 2, 0, 1};
  const float off = static_cast<float>(reduced_code(ReduceOp::kSum, true, 2, 0)) + 0.01f;
  EXPECT_EQ(count_wrong_host(layout, &off, 1), 1u);
}

}  // namespace
}  // namespace fabricbench::collectives

namespace fabricbench::collectives {
namespace {

// A group of Send/Recv: a Recv holds its sender's input from where the Send sat in the sender's
// send buffer; the check names a wrong sender or a wrong place.
TEST(HostCheck, ARecvIsCheckedAgainstItsSendersDataFromTheSendsOffset) {
  std::vector<std::int8_t> sent(64);
  fill_input_host(sent_by(2, DataType::kInt8), sent.data(), 48, sent.size());  // rank 2's Send at offset 48
  EXPECT_EQ(count_wrong_host(copied_from(2, 48, DataType::kInt8), sent.data(), sent.size()), 0u);
  EXPECT_GT(count_wrong_host(copied_from(2, 49, DataType::kInt8), sent.data(), sent.size()), 40u);
  EXPECT_GT(count_wrong_host(copied_from(1, 48, DataType::kInt8), sent.data(), sent.size()), 40u);
  sent[10] = static_cast<std::int8_t>(sent[10] + 1);
  EXPECT_EQ(count_wrong_host(copied_from(2, 48, DataType::kInt8), sent.data(), sent.size()), 1u);
}

}  // namespace
}  // namespace fabricbench::collectives
