// SPDX-License-Identifier: Apache-2.0
// The trace reader and the replay plan on the committed synthetic trace (4 ranks: a data-parallel
// world and two tensor-parallel pairs, 2 steps), and hostile or inconsistent traces: one clear
// InputError or UsageError each.
#include "replay/replay_plan.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "results/alltoallv_import.hpp"
#include "results/trace_file.hpp"

namespace fabricbench::replay {
namespace {

const std::string kTrace = std::string(FABRICBENCH_TEST_DATA) + "/replay/synthetic-4";

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<results::RankTrace> synthetic() { return results::load_trace(kTrace); }

std::string header(int rank, int ranks) {
  return R"({"fabricbench_trace": 1, "rank": )" + std::to_string(rank) + R"(, "ranks": )" + std::to_string(ranks) +
         "}\n";
}

std::string trace_error(const std::vector<std::string>& files) {
  try {
    std::vector<results::RankTrace> ranks;
    for (std::size_t r = 0; r < files.size(); ++r)
      ranks.push_back(results::parse_rank_trace(files[r], "rank" + std::to_string(r)));
    results::check_traces(ranks, "trace");
  } catch (const results::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Trace, TheSyntheticTraceReadsAndRoundTrips) {
  const std::vector<results::RankTrace> ranks = synthetic();
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[2].host, "node2");
  EXPECT_EQ(ranks[0].clock, "gpu");
  ASSERT_EQ(ranks[0].communicators.size(), 2u);
  ASSERT_EQ(ranks[0].operations.size(), 11u);
  const results::TraceOperation& broadcast = ranks[0].operations.front();
  EXPECT_EQ(broadcast.function, "Broadcast");
  EXPECT_EQ(broadcast.dtype, DataType::kInt32);
  EXPECT_EQ(broadcast.root, 0);
  EXPECT_EQ(broadcast.reduction, "unknown");
  EXPECT_DOUBLE_EQ(ranks[0].operations.back().duration_us, 600);
  // The format's text reads back to the same trace.
  const results::RankTrace again = results::parse_rank_trace(results::trace_text(ranks[1]), "again");
  EXPECT_EQ(results::trace_text(again), results::trace_text(ranks[1]));
}

TEST(ReplayPlan, CommunicatorsRowsAndStepsOfEachRank) {
  const std::vector<results::RankTrace> ranks = synthetic();
  const ReplayPlan plan = make_replay_plan(ranks, 2, 4);
  ASSERT_EQ(plan.communicators.size(), 3u);  // the world and two pairs, ordered by hash
  EXPECT_EQ(plan.communicators[0].hash, "1c9e55aa03b7f610");
  EXPECT_EQ(plan.communicators[0].world_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.communicators[0].my_rank, -1);  // rank 2 is not in the first pair
  EXPECT_EQ(plan.communicators[1].world_ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.communicators[1].my_rank, 2);
  EXPECT_EQ(plan.communicators[2].world_ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(plan.communicators[2].my_rank, 0);
  EXPECT_EQ(plan.steps, 2u);
  ASSERT_EQ(plan.operations.size(), 11u);
  // The world: broadcast, all_gather, reduce_scatter, all_reduce, each a row; the pair: its two
  // all_reduces per step are one row of 4 occurrences.
  ASSERT_EQ(plan.rows[1].size(), 4u);
  EXPECT_EQ(plan.rows[1][0].collective->name, "broadcast");
  EXPECT_EQ(plan.rows[1][0].occurrences, 1u);
  EXPECT_EQ(plan.rows[1][2].dtype, DataType::kFloat64);
  ASSERT_EQ(plan.rows[2].size(), 1u);
  EXPECT_EQ(plan.rows[2][0].occurrences, 4u);
  EXPECT_EQ(plan.rows[2][0].root, -1);
  // Largest buffers per communicator: the world's all_reduce of 262144 floats (1 MiB).
  EXPECT_EQ(plan.communicators[1].send_bytes, 262144u * 4);
  EXPECT_NEAR(plan.operations[1].gap_seconds, 40e-6, 1e-12);
}

// Real traces (tests/data/replay/README.md): PyTorch 2.11 DDP and FSDP2 jobs on one H200, two
// ranks as two hosts, recorded by the profiler plugin; three steps kept of each.
std::vector<results::RankTrace> recorded_job(const std::string& name) {
  return results::load_trace(std::string(FABRICBENCH_TEST_DATA) + "/replay/" + name);
}

// Per step of a plan: how many operations of each NCCL function.
std::map<std::int64_t, std::map<std::string, int>> calls_per_step(const ReplayPlan& plan) {
  std::map<std::int64_t, std::map<std::string, int>> steps;
  for (const ReplayOperation& op : plan.operations) ++steps[op.step][std::string(op.collective->function_name)];
  return steps;
}

TEST(RecordedJobs, TheDdpTraceIsOneWorldCommunicatorOfGradientBuckets) {
  const std::vector<results::RankTrace> ranks = recorded_job("h200-ddp");
  ASSERT_EQ(ranks.size(), 2u);
  for (const results::RankTrace& rank : ranks) {
    EXPECT_EQ(rank.clock, "gpu");
    EXPECT_EQ(rank.host, "gpunode" + std::to_string(rank.rank));
    ASSERT_EQ(rank.communicators.size(), 1u);
    EXPECT_EQ(rank.communicators[0].hash, "382938e9fb9d8b91");
    EXPECT_EQ(rank.communicators[0].nodes, 2);
    ASSERT_EQ(rank.operations.size(), 24u);
    for (const results::TraceOperation& op : rank.operations) {
      EXPECT_EQ(op.function, "AllReduce");
      EXPECT_EQ(op.dtype, DataType::kFloat32);
      EXPECT_EQ(op.count, 4096u * 4096 + 4096);  // one Linear(4096, 4096)'s weight and bias per bucket
      EXPECT_EQ(op.algorithm, "RING");
      EXPECT_EQ(op.protocol, "SIMPLE");
      EXPECT_GT(op.duration_us, 30000);  // 64 MiB over NET/Socket: ~40 ms
    }
  }
  for (int me = 0; me < 2; ++me) {
    const ReplayPlan plan = make_replay_plan(ranks, me, 2);
    ASSERT_EQ(plan.communicators.size(), 1u);
    EXPECT_EQ(plan.communicators[0].world_ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(plan.communicators[0].my_rank, me);
    ASSERT_EQ(plan.rows[0].size(), 1u);
    EXPECT_EQ(plan.rows[0][0].collective->name, "all_reduce");
    EXPECT_EQ(plan.rows[0][0].occurrences, 24u);
    EXPECT_EQ(plan.communicators[0].send_bytes, (4096u * 4096 + 4096) * 4);
    EXPECT_EQ(plan.steps, 3u);
    const auto steps = calls_per_step(plan);
    ASSERT_EQ(steps.size(), 3u);
    for (const auto& [step, calls] : steps) EXPECT_EQ(calls.at("AllReduce"), 8) << "step " << step;
    EXPECT_EQ(steps.begin()->first, 12);
  }
}

TEST(RecordedJobs, TheFsdpTraceGathersAndScattersEveryLayerAndEachCallIsJudgedByItsSlowestRank) {
  const std::vector<results::RankTrace> ranks = recorded_job("h200-fsdp");
  const ReplayPlan plan = make_replay_plan(ranks, 1, 2);
  ASSERT_EQ(plan.communicators.size(), 1u);
  EXPECT_EQ(plan.communicators[0].hash, "0ca355cca6955bad");
  EXPECT_EQ(plan.communicators[0].my_rank, 1);
  ASSERT_EQ(plan.rows[0].size(), 2u);  // all_gather first: the forward pass
  EXPECT_EQ(plan.rows[0][0].collective->name, "all_gather");
  EXPECT_EQ(plan.rows[0][0].dtype, DataType::kInt8);
  EXPECT_EQ(plan.rows[0][0].occurrences, 48u);
  EXPECT_EQ(plan.rows[0][1].collective->name, "reduce_scatter");
  EXPECT_EQ(plan.rows[0][1].dtype, DataType::kFloat32);
  EXPECT_EQ(plan.rows[0][1].occurrences, 24u);
  // Each step: 8 layers gathered for the forward and again for the backward, 8 gradients scattered.
  for (const auto& [step, calls] : calls_per_step(plan)) {
    EXPECT_EQ(calls.at("AllGather"), 16) << "step " << step;
    EXPECT_EQ(calls.at("ReduceScatter"), 8) << "step " << step;
  }
  // Back to back, the two ranks split each call's time unevenly (~18 and ~22 ms, alternating):
  // the figure a replayed call is compared with is its slowest member's, the same on both ranks.
  const ReplayPlan other = make_replay_plan(ranks, 0, 2);
  int uneven = 0;
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const double mine = ranks[1].operations[i].duration_us * 1e-6, theirs = ranks[0].operations[i].duration_us * 1e-6;
    EXPECT_DOUBLE_EQ(plan.operations[i].recorded_seconds, mine);
    EXPECT_DOUBLE_EQ(plan.operations[i].recorded_slowest_seconds, std::max(mine, theirs));
    EXPECT_DOUBLE_EQ(other.operations[i].recorded_slowest_seconds, plan.operations[i].recorded_slowest_seconds);
    uneven += std::abs(mine - theirs) > 2e-3 ? 1 : 0;
  }
  EXPECT_GT(uneven, 60);
}

TEST(RecordedJobs, AGroupRecordedUntimedHasNoRecordedDurationToCompareWith) {
  // The MoE recording's all_to_all groups each hold a Send/Recv to the rank itself, which NCCL
  // gives no kernel events ("timed": false): the group's recorded duration is not known, and no
  // ratio is made of it; the calls timed before it keep theirs.
  const std::vector<results::RankTrace> ranks = recorded_job("h200-moe");
  for (int me = 0; me < 2; ++me) {
    const ReplayPlan plan = make_replay_plan(ranks, me, 2);
    std::size_t groups = 0;
    for (const ReplayOperation& op : plan.operations) {
      if (op.collective) {
        if (op.index_in_comm == 0) {
          EXPECT_GT(op.recorded_slowest_seconds, 0);  // the first AllGather
        }
        continue;
      }
      ++groups;
      EXPECT_EQ(op.recorded_seconds, kNotRecorded);
      EXPECT_EQ(op.recorded_slowest_seconds, kNotRecorded);
    }
    EXPECT_EQ(groups, 8u);  // eight all_to_all_single, one group each, in the 40 operations kept
  }
}

TEST(ReplayPlan, WhatCannotBeReplayedIsAUsageError) {
  EXPECT_THROW(make_replay_plan(synthetic(), 0, 2), UsageError);  // recorded on 4 ranks
  // A group of Send/Recv mixing element types (NCCL allows it; a replayed group has one type).
  const std::string mixed =
      header(0, 1) +
      R"({"comm": {"hash": "ab", "size": 1, "rank": 0}})"
      "\n" +
      R"({"op": {"comm": "ab", "function": "Send", "count": 4, "type": "float", "peer": 0, "group": 1}})"
      "\n" +
      R"({"op": {"comm": "ab", "function": "Recv", "count": 4, "type": "int32", "peer": 0, "group": 1}})";
  const std::vector<results::RankTrace> ranks = {results::parse_rank_trace(mixed, "mixed")};
  try {
    make_replay_plan(ranks, 0, 1);
    FAIL() << "a group of two types was planned";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("mixes float and int32"), std::string::npos) << e.what();
  }
}

// An nccl-tests alltoallv matrix (cell [i][j]: bytes from rank i to rank j) made a trace: one group
// of Send/Recv per rank, each Recv knowing where its sender's bytes sit.
TEST(ReplayPlan, AnAlltoallvMatrixIsOneGroupPerRankWithEachRecvAtItsSendersOffset) {
  const std::string matrix = "16 48 80\n32 64 112\n\n64 96 128\n";
  const std::vector<results::RankTrace> ranks = results::import_alltoallv_matrix(matrix, "m", {});
  ASSERT_EQ(ranks.size(), 3u);
  ASSERT_EQ(results::issues_of(ranks[1]).size(), 1u);
  EXPECT_EQ(results::issues_of(ranks[1]).front().size, 6u);
  const ReplayPlan plan = make_replay_plan(ranks, 1, 3);
  ASSERT_EQ(plan.operations.size(), 1u);
  const ReplayOperation& group = plan.operations.front();
  EXPECT_EQ(group.collective, nullptr);
  EXPECT_EQ(group.dtype, DataType::kInt8);
  EXPECT_EQ(group.count, 64u + 96 + 128);  // the busiest member's (rank 2's) bytes sent
  // Rank 1, as alltoallv_perf issues it: to and from rank 0, itself, rank 2; Sends and Recvs each
  // laid out one after the other in their own buffer.
  struct Expected {
    bool send;
    int peer;
    std::uint64_t count, offset, peer_offset;
  };
  const std::vector<Expected> expected = {{true, 0, 32, 0, 0},    {false, 0, 48, 0, 16}, {true, 1, 64, 32, 0},
                                          {false, 1, 64, 48, 32}, {true, 2, 112, 96, 0}, {false, 2, 96, 112, 64}};
  ASSERT_EQ(group.transfers.transfers.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const collectives::Transfer& t = group.transfers.transfers[i];
    EXPECT_EQ(t.send, expected[i].send) << i;
    EXPECT_EQ(t.peer, expected[i].peer) << i;
    EXPECT_EQ(t.count, expected[i].count) << i;
    EXPECT_EQ(t.offset, expected[i].offset) << i;
    if (!t.send) {
      EXPECT_EQ(t.peer_offset, expected[i].peer_offset) << i;
    }
  }
  EXPECT_EQ(plan.communicators[0].send_bytes, 32u + 64 + 112);
  EXPECT_EQ(plan.communicators[0].recv_bytes, 48u + 64 + 96);
  ASSERT_EQ(plan.rows[0].size(), 1u);
  EXPECT_EQ(plan.rows[0][0].collective, nullptr);
  // The trace's text reads back to the same groups.
  const results::RankTrace again = results::parse_rank_trace(results::trace_text(ranks[2]), "again");
  EXPECT_EQ(results::trace_text(again), results::trace_text(ranks[2]));
  EXPECT_EQ(again.operations.front().group, 0);
}

TEST(AlltoallvMatrix, ReadAsNcclTestsReadsItAndEveryBadMatrixIsOneLine) {
  // Scaled, then down to a multiple of 16 bytes; the first N ranks of a larger matrix.
  const auto bytes = results::read_alltoallv_matrix("100 200.5 7\n1e3 0 16\n0 0 40\n", "m", {2.0, 2});
  EXPECT_EQ(bytes, (std::vector<std::vector<std::uint64_t>>{{192, 400}, {2000, 0}}));
  // A byte-order mark an editor saved is no part of the first cell.
  EXPECT_EQ(results::read_alltoallv_matrix("\xEF\xBB\xBF"
                                           "32 16\n16 32\n",
                                           "m", {}),
            (std::vector<std::vector<std::uint64_t>>{{32, 16}, {16, 32}}));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty"},
      {"1 2\n3\n", "1 columns where the first row has 2"},
      {"1 2\n3 4\n5 6\n", "3 rows of 2 columns"},
      {"16 nan\n16 16\n", "'nan' is not a number"},
      {"16 inf\n16 16\n", "'inf' is not a number"},
      {"16 -16\n16 16\n", "is not negative"},
      {"16 1e30\n16 16\n", "more than the 16 GiB"},
      {"16 x\n16 16\n", "'x' is not a number"},
      {"16 0\n0 0\n", "rank 1 neither sends nor receives"},
  };
  for (const auto& [text, expected] : bad) {
    std::string error;
    try {
      results::import_alltoallv_matrix(text, "m", {});
    } catch (const results::InputError& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(expected), std::string::npos)
        << "'" << text << "': expected '" << expected << "', got '" << error << "'";
  }
  EXPECT_THROW(results::read_alltoallv_matrix("16 16\n16 16\n", "m", {1.0, 3}), results::InputError);
  EXPECT_THROW(results::read_alltoallv_matrix("16 16\n16 16\n", "m", {-1.0, 0}), results::InputError);
}

TEST(Trace, HostileAndInconsistentTracesAreOneLineEach) {
  const std::string comm = R"({"comm": {"hash": "ab", "size": 2, "rank": 0}})"
                           "\n";
  const std::string comm1 = R"({"comm": {"hash": "ab", "size": 2, "rank": 1}})"
                            "\n";
  const auto op = [](const std::string& fields) { return R"({"op": {"comm": "ab", )" + fields + "}}\n"; };
  const std::string all_reduce = op(R"("function": "AllReduce", "count": 8, "type": "float")");
  const auto p2p = [&](const char* function, int peer, int count, int group) {
    return op(fmt::format(R"("function": "{}", "count": {}, "type": "int8", "peer": {}, "group": {})", function, count,
                          peer, group));
  };
  const auto send = [&](int peer, int count, int group) { return p2p("Send", peer, count, group); };
  const auto recv = [&](int peer, int count, int group) { return p2p("Recv", peer, count, group); };
  const std::string cd = std::string(R"({"comm": {"hash": "cd", "size": 2, "rank": 0}})") + "\n";
  const std::string cd1 = std::string(R"({"comm": {"hash": "cd", "size": 2, "rank": 1}})") + "\n";
  const std::string op_cd =
      std::string(R"({"op": {"comm": "cd", "function": "AllReduce", "count": 8, "type": "float"}})") + "\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"", ""}, "no trace header"},
      {{"{\"rows\": []}\n", ""}, "not a fabricbench trace"},
      {{header(0, 2) + "{\"op\": {\"comm\": \"zz\"", header(1, 2)}, "not a JSON object"},
      {{R"({"fabricbench_trace": 99, "rank": 0, "ranks": 1})", ""}, "newer than this build"},
      {{header(0, 2) + comm + op_cd, header(1, 2) + comm1}, "names communicator"},
      {{header(0, 2) + comm, header(1, 2) + comm1}, "no rank issues any operation: nothing to replay"},
      {{header(0, 2) + comm + op(R"("function": "AllReduce", "count": 8, "type": "float", "comm": "cd")"),
        header(1, 2) + comm1},
       "key 'comm' appears twice"},
      {{header(0, 2) + comm + op(R"("function": "AllReduce", "count": 1e30, "type": "float")"), header(1, 2) + comm1},
       "'count' is not a whole number"},
      {{header(0, 2) + comm + op(R"("function": "AllReduce", "count": 99999999999999, "type": "float")"),
        header(1, 2) + comm1},
       "outside"},
      {{header(0, 2) + comm + op(R"("function": "Frobnicate", "count": 8, "type": "float")"), header(1, 2) + comm1},
       "not one of NCCL's operations"},
      {{header(0, 2) + comm + op(R"("function": "AllReduce", "count": 8, "type": "float", "duration_us": -1)"),
        header(1, 2) + comm1},
       "not a time"},
      {{header(0, 2) + comm + op(R"("function": "Broadcast", "count": 8, "type": "float")"), header(1, 2) + comm1},
       "has a root"},
      {{header(0, 2) + comm + all_reduce, header(1, 2) + comm}, "both say they are its rank 0"},
      {{header(0, 2) + comm + all_reduce}, "1 rank file(s) for a world of 2"},
      {{header(0, 2) + comm + all_reduce, header(1, 2) + comm1},
       "rank 1 issues nothing more, its rank 0 (world rank 0) AllReduce of 8 x float"},
      {{header(0, 2) + comm + all_reduce,
        header(1, 2) + comm1 + op(R"("function": "AllReduce", "count": 9, "type": "float")")},
       "rank 1 issues AllReduce of 9 x float, its rank 0 (world rank 0) AllReduce of 8 x float"},
      {{header(0, 2) + R"({"comm": {"hash": "ab", "size": 3, "rank": 0}})" + "\n", header(1, 2) + comm1},
       "'size' is 3, outside 1..2"},
      {{header(0, 3) + R"({"comm": {"hash": "ab", "size": 3, "rank": 0}})" + "\n",
        header(1, 3) + R"({"comm": {"hash": "ab", "size": 2, "rank": 1}})" + "\n", header(2, 3)},
       "has 2 ranks on rank 1, 3 on another"},
      // Two communicators of the same two ranks issued in opposite orders: each waits for the other.
      {{header(0, 2) + comm + cd + all_reduce + op_cd, header(1, 2) + comm1 + cd1 + op_cd + all_reduce},
       "cannot be replayed one after the other"},
      // Groups of Send/Recv: each Send met by its peer's Recv of the same count and type, in one
      // group on every member, the group's operations one after the other on one communicator.
      {{header(0, 2) + comm + send(1, 4, 0), header(1, 2) + comm1 + send(0, 4, 0)},
       "rank 0 sends 1 time(s) to its rank 1, which receives 0 time(s) from it"},
      {{header(0, 2) + comm + send(1, 4, 0), header(1, 2) + comm1 + recv(0, 5, 0)},
       "rank 0 sends 4 x int8 to its rank 1, which receives 5 x int8"},
      {{header(0, 2) + comm + recv(1, 4, 0), header(1, 2) + comm1 + recv(0, 4, 0)},
       "receives 1 time(s) from its rank 1, which sends it nothing"},
      {{header(0, 2) + comm + send(1, 4, 3) + all_reduce + send(1, 4, 3), header(1, 2) + comm1},
       "group 3 was already closed"},
      {{header(0, 2) + comm + cd + send(1, 4, 3) +
            R"({"op": {"comm": "cd", "function": "Send", "count": 4, "type": "int8", "peer": 1, "group": 3}})" + "\n",
        header(1, 2) + comm1 + cd1},
       "group 3 spans communicators 'ab' and 'cd'"},
      {{header(0, 2) + comm + send(1, 4, 0), header(1, 2) + comm1 + all_reduce},
       "rank 1 issues AllReduce of 8 x float, its rank 0 (world rank 0) a group of Send/Recv"},
  };
  for (const auto& [files, expected] : cases) {
    const std::string error = trace_error(files);
    EXPECT_NE(error.find(expected), std::string::npos) << "expected '" << expected << "', got '" << error << "'";
  }
  // A folder that is not one, and one without rank files.
  EXPECT_THROW(results::load_trace("/nonexistent/trace"), results::InputError);
  EXPECT_THROW(results::load_trace(std::filesystem::temp_directory_path().string()), results::InputError);
  // Nothing wrong: the two ranks agree.
  EXPECT_EQ(trace_error({header(0, 2) + comm + all_reduce, header(1, 2) + comm1 + all_reduce}), "");
  EXPECT_EQ(read(kTrace + "/trace.rank9.jsonl"), "");  // no such rank: the folder holds 4
}

}  // namespace
}  // namespace fabricbench::replay
