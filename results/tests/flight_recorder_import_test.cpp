// SPDX-License-Identifier: Apache-2.0
// PyTorch's Flight Recorder dumps made a fabricbench trace: real dumps of PyTorch 2.11 (NCCL
// 2.28.9) on an H100, two ranks as two hosts (tests/data/flight-recorder/README.md): the process
// group rebuilt, each call's count as NCCL's, all_to_all_single as one group of Send/Recv, steps
// found; rings that start apart aligned; damaged or inconsistent dumps one InputError each.
#include "results/flight_recorder_import.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/input_file.hpp"

namespace fabricbench::results {
namespace {

std::vector<NamedText> dumps(const std::string& job) {
  return flight_recorder_files(std::string(FABRICBENCH_TEST_DATA) + "/flight-recorder/" + job);
}

std::string error_of(const std::vector<NamedText>& files) {
  try {
    import_flight_recorder(files, nullptr);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A dump's JSON changed by `edit`, under its own name.
NamedText edited(const NamedText& file, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json document = nlohmann::json::parse(file.text);
  edit(document);
  return {file.name, document.dump()};
}

TEST(FlightRecorder, TheDdpDumpsAreOneProcessGroupOfTimedGradientBuckets) {
  SkippedCalls skipped;
  const std::vector<RankTrace> ranks = import_flight_recorder(dumps("h100-ddp"), &skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(ranks.size(), 2U);
  for (const RankTrace& t : ranks) {
    EXPECT_EQ(t.clock, "gpu");  // TORCH_NCCL_ENABLE_TIMING=1: CUDA events around each call
    ASSERT_EQ(t.communicators.size(), 1U);
    EXPECT_EQ(t.communicators[0].hash, ranks[0].communicators[0].hash);
    EXPECT_EQ(t.communicators[0].size, 2);
    EXPECT_EQ(t.communicators[0].rank, t.rank);
    ASSERT_EQ(t.operations.size(), 40U);
    EXPECT_EQ(t.operations[0].function, "AllGather");  // init_process_group's first call
    EXPECT_EQ(t.operations[0].dtype, DataType::kInt64);
    EXPECT_EQ(t.operations[1].function, "Broadcast");  // DDP's parameters from rank 0
    EXPECT_EQ(t.operations[1].root, 0);
    std::size_t buckets = 0;
    for (const TraceOperation& op : t.operations) {
      if (op.function != "AllReduce" || op.count != 4096u * 4096 + 4096) continue;
      ++buckets;
      EXPECT_TRUE(op.timed);
      EXPECT_GT(op.duration_us, 30000);  // 64 MiB over NET/Socket: ~40 ms
      EXPECT_LT(op.duration_us, 60000);
    }
    EXPECT_GE(buckets, 24U);
    // Starts never go back; a gap is never negative.
    for (std::size_t i = 1; i < t.operations.size(); ++i) {
      EXPECT_GE(t.operations[i].start_us, t.operations[i - 1].start_us);
      EXPECT_GE(t.operations[i].gap_us, 0);
    }
  }
}

TEST(FlightRecorder, FsdpsGatherAndScatterCountAsNcclCountsThem) {
  const std::vector<RankTrace> ranks = import_flight_recorder(dumps("h100-fsdp"), nullptr);
  std::map<std::string, std::uint64_t> counts;
  for (const TraceOperation& op : ranks[0].operations) counts[op.function] = op.count;
  // all_gather_into_tensor: NCCL's count is what each rank sends (its shard); reduce_scatter_tensor:
  // what each rank keeps. A Linear(4096, 4096)'s weight and bias split over two ranks.
  EXPECT_EQ(counts.at("AllGather"), (4096u * 4096 + 4096) / 2);
  EXPECT_EQ(counts.at("ReduceScatter"), (4096u * 4096 + 4096) / 2);
}

TEST(FlightRecorder, AnAllToAllSingleIsOneGroupSendingEachRanksRecordedTotal) {
  const std::vector<RankTrace> ranks = import_flight_recorder(dumps("h100-moe"), nullptr);
  // The first all_to_all_single: rank 0 sent 2048 rows of 1024 floats and took in 1536, rank 1
  // the reverse. No split is recorded: each rank's total is split in proportion to what each
  // receiver took in (rank 0: 2048 x 1536/3584 rows to itself, the rest to rank 1).
  for (const RankTrace& t : ranks) {
    const auto first = std::find_if(t.operations.begin(), t.operations.end(),
                                    [](const TraceOperation& op) { return op.point_to_point(); });
    ASSERT_NE(first, t.operations.end());
    std::uint64_t sent = 0, received = 0;
    for (auto op = first; op != t.operations.end() && op->group == first->group; ++op) {
      EXPECT_TRUE(op->timed);
      (op->function == "Send" ? sent : received) += op->count;
    }
    EXPECT_EQ(sent, (t.rank == 0 ? 2048u : 1536u) * 1024);
    EXPECT_NEAR(static_cast<double>(received), (t.rank == 0 ? 1536.0 : 2048.0) * 1024, 2);
  }
  EXPECT_EQ(ranks[0].operations[5].count, 2048u * 1024 * 1536 / 3584);  // rank 0 to itself
  // Steps: the DDP buckets and four all_to_all a step repeat; init's calls are step 0.
  EXPECT_EQ(ranks[0].operations.front().step, 0);
  EXPECT_GT(ranks[0].operations.back().step, 0);
}

TEST(FlightRecorder, RingsThatStartApartKeepOnlyTheCallsEveryMemberHolds) {
  std::vector<NamedText> files = dumps("h100-ddp");
  files[0] =
      edited(files[0], [](nlohmann::json& d) { d["entries"].erase(d["entries"].begin(), d["entries"].begin() + 3); });
  const std::vector<RankTrace> ranks = import_flight_recorder(files, nullptr);
  EXPECT_EQ(ranks[0].operations.size(), 37U);
  EXPECT_EQ(ranks[1].operations.size(), 37U);
}

TEST(FlightRecorder, DamagedOrInconsistentDumpsAreOneLineEach) {
  const std::vector<NamedText> good = dumps("h100-ddp");
  EXPECT_NE(error_of({{"fr.rank0", std::string("\x80\x02}q\x00", 5)}, good[1]}).find("a pickle; convert it first"),
            std::string::npos);
  EXPECT_NE(error_of({{"dump.json", good[0].text}}).find("does not end with the rank"), std::string::npos);
  EXPECT_NE(error_of({good[0], {"fr.rank2.json", good[1].text}}).find("rank 2 where rank 1 was expected"),
            std::string::npos);
  EXPECT_NE(error_of({good[0]}).find("names rank 1, but only 1 dump(s)"), std::string::npos);
  EXPECT_NE(error_of({{good[0].name, good[0].text.substr(0, 500)}, good[1]}).find("not JSON"), std::string::npos);
  EXPECT_NE(error_of({edited(good[0], [](nlohmann::json& d) { d["pg_config"]["0"]["ranks"] = "[0, x]"; }), good[1]})
                .find("not a list of ranks"),
            std::string::npos);
  EXPECT_NE(error_of({edited(good[0], [](nlohmann::json& d) { d["entries"][2]["duration_ms"] = -1; }), good[1]})
                .find("entry 2: 'duration_ms' is -1"),
            std::string::npos);
  EXPECT_NE(error_of({edited(good[0], [](nlohmann::json& d) { d["entries"][2]["input_dtypes"] = {"ComplexFloat"}; }),
                      good[1]})
                .find("'ComplexFloat'"),
            std::string::npos);
  EXPECT_NE(error_of({edited(good[0],
                             [](nlohmann::json& d) {
                               d["entries"][4]["process_group"] = {"9", "x"};
                             }),
                      good[1]})
                .find("process group '9' is not in pg_config"),
            std::string::npos);
  EXPECT_NE(error_of({edited(good[0], [](nlohmann::json& d) { d["version"] = "99.0"; }), good[1]})
                .find("fr.rank0.json: Flight Recorder dump version \"99.0\": this build reads version 2"),
            std::string::npos);
  EXPECT_NE(
      error_of({edited(good[0], [](nlohmann::json& d) { d["entries"][2]["time_created_ns"] = INT64_MAX; }), good[1]})
          .find("entry 2: 'time_created_ns' is more than a day after the call before it ended"),
      std::string::npos);
  // A call one rank recorded with another size than its peer: the trace check refuses it.
  EXPECT_NE(error_of({edited(good[0], [](nlohmann::json& d) { d["entries"][2]["input_sizes"] = {{7}}; }), good[1]}),
            "");
}

// A dump written by hand in the Flight Recorder's format: `entries` on a process group "2" of
// world ranks 2 and 3 (a pipeline stage's pair), beside the world's group "0".
NamedText pipeline_rank(int rank, const nlohmann::json& entries) {
  nlohmann::json d{{"version", "2.10"},
                   {"pg_config",
                    {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", "[0, 1, 2, 3]"}}},
                     {"2", {{"name", "2"}, {"desc", "stage"}, {"ranks", "[2, 3]"}}}}},
                   {"entries", entries}};
  return {"fr.rank" + std::to_string(rank) + ".json", d.dump()};
}

nlohmann::json p2p_entry(const std::string& name, std::int64_t seq) {
  return {{"pg_id", 2},
          {"process_group", {"2", "stage"}},
          {"is_p2p", true},
          {"p2p_seq_id", seq},
          {"collective_seq_id", 0},
          {"profiling_name", name},
          {"input_sizes", {{256}}},
          {"input_dtypes", {"Float"}},
          {"time_created_ns", 1000 + seq}};
}

TEST(FlightRecorder, SendRecvPeersAreRanksOfTheirProcessGroup) {
  const std::vector<RankTrace> ranks =
      import_flight_recorder({pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
                              pipeline_rank(2, nlohmann::json::array({p2p_entry("nccl:send 0->1", 1)})),
                              pipeline_rank(3, nlohmann::json::array({p2p_entry("nccl:recv 1<-0", 1)}))},
                             nullptr);
  ASSERT_EQ(ranks[2].operations.size(), 1U);
  EXPECT_EQ(ranks[2].operations[0].function, "Send");
  EXPECT_EQ(ranks[2].operations[0].peer, 1);  // group rank 1: world rank 3
  EXPECT_EQ(ranks[3].operations[0].peer, 0);
  // On a communicator of the two ends, as PyTorch runs a lone send/recv.
  const TraceCommunicator* pair = ranks[2].communicator(ranks[2].operations[0].comm);
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->size, 2);
  EXPECT_EQ(pair->rank, 0);
  EXPECT_EQ(ranks[3].operations[0].comm, ranks[2].operations[0].comm);
  EXPECT_FALSE(ranks[2].operations[0].timed);  // no duration_ms: TORCH_NCCL_ENABLE_TIMING was off
  EXPECT_NE(error_of({pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
                      pipeline_rank(2, nlohmann::json::array({p2p_entry("nccl:send 0->2", 1)})),
                      pipeline_rank(3, nlohmann::json::array())})
                .find("names group rank 2, but its process group has 2 rank(s)"),
            std::string::npos);
  EXPECT_NE(error_of({pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
                      pipeline_rank(2, nlohmann::json::array({p2p_entry("nccl:send 0->1x", 1)})),
                      pipeline_rank(3, nlohmann::json::array())})
                .find("names no peer rank"),
            std::string::npos);
  EXPECT_NE(error_of({pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
                      pipeline_rank(2, nlohmann::json::array({p2p_entry("nccl:send", 1)})),
                      pipeline_rank(3, nlohmann::json::array())})
                .find("'nccl:send' names no peer rank"),
            std::string::npos);
  // One end of the Send/Recv lost (the ring wrapped): said as such, not as a communicator's rank.
  EXPECT_EQ(error_of({pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
                      pipeline_rank(2, nlohmann::json::array({p2p_entry("nccl:send 0->1", 1)})),
                      pipeline_rank(3, nlohmann::json::array())}),
            "fr.rank2.json entry 0: 'nccl:send 0->1' has no matching call in rank 3's dump: that recording lost its "
            "end (a ring that wrapped: raise TORCH_NCCL_TRACE_BUFFER_SIZE)");
  EXPECT_NE(error_of({pipeline_rank(0, nlohmann::json::array()),
                      {"fr.rank00.json", pipeline_rank(0, nlohmann::json::array()).text},
                      pipeline_rank(1, nlohmann::json::array())})
                .find("are both rank 0"),
            std::string::npos);
}

TEST(FlightRecorder, ASendRecvOnTheWholeWorldInvolvesOnlyItsTwoEnds) {
  // A pipeline's send 2->3 on the default group of 4: ranks 0 and 1 issue nothing, and the replay
  // must not wait for them.
  const auto on_world = [](const std::string& name) {
    nlohmann::json e = p2p_entry(name, 1);
    e["pg_id"] = 0;
    e["process_group"] = {"0", "default_pg"};
    return nlohmann::json::array({e});
  };
  const std::vector<RankTrace> ranks = import_flight_recorder(
      {pipeline_rank(0, nlohmann::json::array()), pipeline_rank(1, nlohmann::json::array()),
       pipeline_rank(2, on_world("nccl:send 2->3")), pipeline_rank(3, on_world("nccl:recv 3<-2"))},
      nullptr);
  EXPECT_TRUE(ranks[0].operations.empty());
  ASSERT_EQ(ranks[2].operations.size(), 1U);
  EXPECT_EQ(ranks[2].communicator(ranks[2].operations[0].comm)->size, 2);
  EXPECT_EQ(ranks[2].operations[0].peer, 1);
  EXPECT_EQ(ranks[3].operations[0].peer, 0);
}

TEST(FlightRecorder, AnAllToAllWhoseMembersTotalsDisagreeIsRefused) {
  std::vector<NamedText> files = dumps("h100-moe");
  files[0] = edited(files[0], [](nlohmann::json& d) { d["entries"][5]["output_sizes"] = {{7}}; });
  EXPECT_NE(error_of(files).find("entry 5: nccl:all_to_all of process group '0': its members sent"), std::string::npos);
}

TEST(FlightRecorder, CallsWithNoNcclCallToReplayAreCountedNotImported) {
  std::vector<NamedText> files = dumps("h100-ddp");
  for (NamedText& f : files)
    f = edited(f, [](nlohmann::json& d) { d["entries"][1]["profiling_name"] = "nccl:coalesced"; });
  SkippedCalls skipped;
  const std::vector<RankTrace> ranks = import_flight_recorder(files, &skipped);
  EXPECT_EQ(skipped, (SkippedCalls{{"nccl:coalesced", 2}}));
  EXPECT_EQ(ranks[0].operations.size(), 39U);
}

TEST(FlightRecorder, ACallsNameHoldingALineBreakIsCountedOnOneLine) {
  std::vector<NamedText> files = dumps("h100-ddp");
  for (NamedText& f : files)
    f = edited(f, [](nlohmann::json& d) { d["entries"][1]["profiling_name"] = "nccl:coal\nesced"; });
  SkippedCalls skipped;
  import_flight_recorder(files, &skipped);
  EXPECT_EQ(skipped, (SkippedCalls{{"nccl:coal\\nesced", 2}}));  // the note fb_import prints stays one line
}

}  // namespace
}  // namespace fabricbench::results
