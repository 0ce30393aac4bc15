// SPDX-License-Identifier: Apache-2.0
// Bus-bandwidth factors and byte counts against hand-worked cases (nccl-tests doc/PERFORMANCE.md).
#include <gtest/gtest.h>

#include "collectives/catalog.hpp"
#include "collectives/runner.hpp"

namespace fabricbench::collectives {
namespace {

struct Case {
  const Collective* collective;
  int ranks;
  double factor;
};

TEST(BusBandwidth, FactorsForOneTwoThreeAndEightRanks) {
  const Case cases[] = {
      {&kAllReduce, 1, 0.0},     {&kAllReduce, 2, 1.0},         {&kAllReduce, 3, 4.0 / 3},
      {&kAllReduce, 8, 1.75},    {&kAllGather, 1, 0.0},         {&kAllGather, 2, 0.5},
      {&kAllGather, 3, 2.0 / 3}, {&kAllGather, 8, 0.875},       {&kReduceScatter, 1, 0.0},
      {&kReduceScatter, 2, 0.5}, {&kReduceScatter, 3, 2.0 / 3}, {&kReduceScatter, 8, 0.875},
      {&kAlltoall, 1, 0.0},      {&kAlltoall, 2, 0.5},          {&kAlltoall, 3, 2.0 / 3},
      {&kAlltoall, 8, 0.875},    {&kBroadcast, 1, 1.0},         {&kBroadcast, 8, 1.0},
      {&kReduce, 3, 1.0},        {&kSendrecv, 8, 1.0},          {&kGather, 1, 0.0},
      {&kGather, 4, 0.75},       {&kScatter, 2, 0.5},           {&kScatter, 8, 0.875},
  };
  for (const Case& c : cases)
    EXPECT_DOUBLE_EQ(c.collective->busbw_factor(c.ranks), c.factor) << c.collective->name << " n=" << c.ranks;
}

TEST(ByteCounts, GatherAndScatterCountEveryRanksShare) {
  // 1000 B of float over 3 ranks: 83 elements each (rounded down), 249 at the root; algbw counts
  // all 249, as nccl-tests' gather and scatter do.
  for (const Collective* c : {&kGather, &kScatter}) {
    const std::uint64_t count = c->count_for(1000, 4, 3);
    EXPECT_EQ(count, 83u) << c->name;
    EXPECT_EQ(reported_bytes(*c, count, 4, 3), 996u) << c->name;
    EXPECT_EQ(c->algbw_elements(count, 3), 249u) << c->name;
  }
  EXPECT_EQ(kGather.buffers(83, 3).recv, 249u);
  EXPECT_EQ(kScatter.buffers(83, 3).send, 249u);
}

TEST(SweepCounts, SizesThatRoundToOneCountAreMeasuredOnce) {
  // -b 8 -e 16 -f 1.0000001 asks for 8, 9, ..., 16 B: float counts 2, 2, 2, 2, 3, 3, 3, 3, 4.
  SweepSpec sweep;
  sweep.min_bytes = 8;
  sweep.max_bytes = 16;
  sweep.factor = 1.0000001;
  EXPECT_EQ(sweep_counts(kAllReduce, sweep, DataType::kFloat32, 2), (std::vector<std::uint64_t>{2, 3, 4}));
  // all_gather divides by the ranks too: 8..16 B over 2 ranks of float is 1 or 2 elements each.
  EXPECT_EQ(sweep_counts(kAllGather, sweep, DataType::kFloat32, 2), (std::vector<std::uint64_t>{1, 2}));
}

TEST(Catalog, EveryCollectiveIsCompleteAndFoundByName) {
  for (const Collective* c : all_collectives()) {
    EXPECT_EQ(find_collective(c->name), c);
    EXPECT_TRUE(c->count_for && c->buffers && c->algbw_elements && c->busbw_factor && c->mpi) << c->name;
  }
  EXPECT_EQ(find_collective("gather"), &kGather);
  EXPECT_EQ(find_collective("no_such"), nullptr);
}

TEST(ByteCounts, AllReduceOfOneMegabyteFloatOnFourRanks) {
  // 1 MiB of float = 262144 elements; algbw counts them once: 1 MiB in 1 ms = 1.048576 GB/s,
  // busbw = 1.048576 * 2 * 3 / 4 = 1.572864 GB/s.
  const std::uint64_t count = kAllReduce.count_for(1 << 20, 4, 4);
  EXPECT_EQ(count, 262144u);
  EXPECT_EQ(kAllReduce.algbw_elements(count, 4) * 4, 1u << 20);
  const double algbw = static_cast<double>(kAllReduce.algbw_elements(count, 4) * 4) / 1e-3;
  EXPECT_DOUBLE_EQ(algbw * kAllReduce.busbw_factor(4), 1.572864e9);
}

TEST(ByteCounts, GatherTypesShareTheSizeAmongRanksAndRoundDown) {
  // 1000 B of int32 on 3 ranks: 250 elements, 83 per rank (83 * 3 = 249: one element rounded off).
  const std::uint64_t count = kAllGather.count_for(1000, 4, 3);
  EXPECT_EQ(count, 83u);
  EXPECT_EQ(kAllGather.buffers(count, 3).send, 83u);
  EXPECT_EQ(kAllGather.buffers(count, 3).recv, 249u);
  EXPECT_EQ(reported_bytes(kAllGather, count, 4, 3), 996u);
  EXPECT_EQ(kAllGather.algbw_elements(count, 3), 249u);

  EXPECT_EQ(kReduceScatter.buffers(count, 3).send, 249u);
  EXPECT_EQ(kReduceScatter.buffers(count, 3).recv, 83u);

  // alltoall: count is the chunk for each peer; each rank sends and receives count * n.
  const std::uint64_t chunk = kAlltoall.count_for(1 << 20, 8, 8);
  EXPECT_EQ(chunk, 16384u);
  EXPECT_EQ(kAlltoall.buffers(chunk, 8).send, 131072u);
  EXPECT_EQ(reported_bytes(kAlltoall, chunk, 8, 8), 1u << 20);
}

TEST(ByteCounts, RootedAndPointToPointMoveTheWholeBuffer) {
  EXPECT_EQ(kBroadcast.count_for(4096, 8, 5), 512u);
  EXPECT_EQ(kReduce.algbw_elements(512, 5), 512u);
  EXPECT_EQ(kSendrecv.buffers(512, 5).recv, 512u);
}

TEST(ByteCounts, SizesBelowOneElementPerRankGiveZeroCount) {
  EXPECT_EQ(kAllGather.count_for(8, 8, 3), 0u);
  EXPECT_EQ(reported_bytes(kAllGather, 0, 8, 3), 0u);
}

}  // namespace
}  // namespace fabricbench::collectives
