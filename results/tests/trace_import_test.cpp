// SPDX-License-Identifier: Apache-2.0
// NCCL Inspector's output (in its documented record format, v4.0) made a fabricbench trace: world
// ranks from the communicator that spans every process, issue order from verbose timestamps,
// repeated records once, and damaged or inconsistent output one InputError each.
#include "results/trace_import.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fabricbench::results {
namespace {

// One Inspector record of a collective (pretty-printed over several lines, as its dump writes).
std::string coll(const std::string& comm, int rank, int ranks, const std::string& function, std::uint64_t sn,
                 std::uint64_t bytes, std::uint64_t exec_us, const std::string& verbose = "") {
  return "{\n  \"header\": {\"id\": \"0x" + comm + "\", \"rank\": " + std::to_string(rank) +
         ", \"n_ranks\": " + std::to_string(ranks) + ", \"nnodes\": 2},\n" +
         "  \"metadata\": {\"inspector_output_format_version\": \"v4.0\", \"hostname\": \"node" + std::to_string(rank) +
         "\", \"pid\": 7},\n  \"coll_perf\": {\"coll\": \"" + function + "\", \"coll_sn\": " + std::to_string(sn) +
         ", \"coll_msg_size_bytes\": " + std::to_string(bytes) + ", \"coll_exec_time_us\": " + std::to_string(exec_us) +
         ", \"coll_timing_source\": \"kernel_gpu\"" + verbose + "}\n}\n";
}

std::string started_at(std::uint64_t us) {
  return ", \"event_trace_ts\": {\"coll_start_ts\": " + std::to_string(us) +
         ", \"kernel_events\": [{\"channel_id\": 0, \"kernel_start_ts\": " + std::to_string(us + 5) +
         ", \"kernel_stop_ts\": " + std::to_string(us + 100) + "}]}";
}

std::string error_of(const std::vector<NamedText>& files) {
  try {
    import_inspector(files);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InspectorImport, WorldRanksComeFromTheCommunicatorThatSpansEveryProcess) {
  // The files in name order are world ranks 1 and 0: the world communicator says which is which.
  const std::vector<NamedText> files = {
      {"a-pid7.log", coll("e62ded", 1, 2, "AllReduce", 1, 1 << 20, 900) + coll("e62ded", 1, 2, "Broadcast", 1, 64, 20)},
      {"b-pid7.log",
       coll("e62ded", 0, 2, "AllReduce", 1, 1 << 20, 880) + coll("e62ded", 0, 2, "Broadcast", 1, 64, 22)}};
  const std::vector<RankTrace> traces = import_inspector(files);
  ASSERT_EQ(traces.size(), 2U);
  EXPECT_EQ(traces[0].host, "node0");
  EXPECT_EQ(traces[0].clock, "gpu");
  ASSERT_EQ(traces[0].communicators.size(), 1U);
  EXPECT_EQ(traces[0].communicators[0].hash, "e62ded");
  EXPECT_EQ(traces[0].communicators[0].nodes, 2);
  ASSERT_EQ(traces[0].operations.size(), 2U);
  const TraceOperation& all_reduce = traces[0].operations[0];
  EXPECT_EQ(all_reduce.function, "AllReduce");
  EXPECT_EQ(all_reduce.count, 1U << 20);  // bytes, as int8: Inspector records no type
  EXPECT_EQ(all_reduce.dtype, DataType::kInt8);
  EXPECT_DOUBLE_EQ(all_reduce.duration_us, 880);
  EXPECT_EQ(traces[0].operations[1].root, 0);  // Inspector records no root
  EXPECT_DOUBLE_EQ(traces[1].operations[0].duration_us, 900);
}

TEST(InspectorImport, OneNumberWithOtherFiguresIsRefusedNotDropped) {
  // A periodic dump repeats a record as it was; two operations under one number are two runs' output.
  std::vector<NamedText> files;
  for (int rank = 0; rank < 2; ++rank)
    files.push_back({"p" + std::to_string(rank) + ".log",
                     coll("aa", rank, 2, "AllReduce", 3, 8192, 100) + coll("aa", rank, 2, "AllReduce", 3, 65536, 140)});
  EXPECT_NE(error_of(files).find("p0.log object 2: AllReduce number 3 of communicator aa is there already with other "
                                 "figures"),
            std::string::npos)
      << error_of(files);
}

TEST(InspectorImport, VerboseTimestampsGiveIssueOrderAndGaps) {
  // Written in completion order across two communicators; the kernels' starts say otherwise.
  std::vector<NamedText> files;
  for (int rank = 0; rank < 2; ++rank)
    files.push_back({"p" + std::to_string(rank) + ".log",
                     coll("aa", rank, 2, "AllGather", 1, 4096, 100, started_at(2000)) +
                         coll("aa", rank, 2, "AllReduce", 1, 8192, 100, started_at(1000)) +
                         coll("aa", rank, 2, "AllReduce", 1, 8192, 100, started_at(1000))});  // repeated
  const std::vector<RankTrace> traces = import_inspector(files);
  ASSERT_EQ(traces[0].operations.size(), 2U);
  EXPECT_EQ(traces[0].operations[0].function, "AllReduce");
  EXPECT_EQ(traces[0].operations[1].function, "AllGather");
  EXPECT_DOUBLE_EQ(traces[0].operations[1].start_us, 1000);
  EXPECT_DOUBLE_EQ(traces[0].operations[1].gap_us, 900);  // 2000 - (1000 + 100): the calls' starts
}

TEST(InspectorImport, PointToPointRecordsKeepTheirPeer) {
  std::vector<NamedText> files;
  for (int rank = 0; rank < 2; ++rank)
    files.push_back({"p" + std::to_string(rank) + ".log",
                     coll("bb", rank, 2, "AllReduce", 1, 64, 10) +
                         "{\"header\": {\"id\": \"0xbb\", \"rank\": " + std::to_string(rank) +
                         ", \"n_ranks\": 2}, \"p2p_perf\": {\"p2p\": \"" + (rank == 0 ? "Send" : "Recv") +
                         "\", \"p2p_sn\": 1, \"p2p_peer\": " + std::to_string(1 - rank) +
                         ", \"p2p_msg_size_bytes\": 1024, \"p2p_exec_time_us\": 12}}\n"});
  const std::vector<RankTrace> traces = import_inspector(files);
  ASSERT_EQ(traces[0].operations.size(), 2U);
  EXPECT_EQ(traces[0].operations[1].function, "Send");
  EXPECT_EQ(traces[0].operations[1].peer, 1);
  EXPECT_EQ(traces[1].operations[1].function, "Recv");
  EXPECT_EQ(traces[0].clock, "host");  // the p2p record named no GPU timing source
}

TEST(InspectorImport, DamagedOrInconsistentOutputIsOneClearError) {
  const std::string good = coll("cc", 0, 2, "AllReduce", 1, 64, 10);
  EXPECT_NE(error_of({{"p0.log", good.substr(0, good.size() / 2)}, {"p1.log", good}}).find("p0.log object 1: not JSON"),
            std::string::npos);
  // A member's ring let an operation go that the other kept: the communicator's members disagree.
  const std::string msg = error_of({{"p0.log", good + coll("cc", 0, 2, "AllReduce", 2, 64, 10)},
                                    {"p1.log", coll("cc", 1, 2, "AllReduce", 2, 64, 10)}});
  EXPECT_FALSE(msg.empty());
  EXPECT_NE(error_of({{"p0.log", R"({"header": {"id": "0xcc", "rank": 5, "n_ranks": 2}, "coll_perf": {}})"}})
                .find("'rank' is 5, outside 0..1"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"p0.log", coll("cc", 0, 2, "AllReduce", 1, std::uint64_t{1} << 40, 10)}}).find("coll_msg_size_bytes"),
      std::string::npos);
  EXPECT_NE(error_of({}).find("no files"), std::string::npos);
  // A record naming its time twice: nlohmann keeps the last, another reader the first.
  std::string twice = good;
  twice.insert(twice.find("\"coll_timing_source\""), "\"coll_exec_time_us\": 9999, ");
  EXPECT_EQ(error_of({{"p0.log", twice}}),
            "p0.log object 1: key 'coll_exec_time_us' appears twice in one object: which value is meant is not known "
            "(damaged, or not written by one program)");
}

TEST(InspectorImport, WritesATraceTheReaderLoadsAndNeverMixesTwo) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "fb-inspector-import-test";
  std::filesystem::remove_all(folder);
  std::vector<NamedText> files;
  for (int rank = 0; rank < 2; ++rank)
    files.push_back({"p" + std::to_string(rank) + ".log", coll("dd", rank, 2, "ReduceScatter", 1, 2048, 30)});
  const std::vector<RankTrace> traces = import_inspector(files);
  write_trace(traces, folder.string());
  const std::vector<RankTrace> loaded = load_trace(folder.string());
  ASSERT_EQ(loaded.size(), 2U);
  EXPECT_EQ(loaded[1].operations[0].function, "ReduceScatter");
  EXPECT_THROW(write_trace(traces, folder.string()), UsageError);
  // A rank file the world has no rank for, or one spelled otherwise, is a leftover: refused.
  const auto load_error = [&]() -> std::string {
    try {
      load_trace(folder.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  for (const char* stray : {"trace.rank7.jsonl", "trace.rank01.jsonl", "trace.rank1.jsonl.partial"}) {
    std::filesystem::copy_file(folder / "trace.rank1.jsonl", folder / stray);
    EXPECT_NE(load_error().find(std::string(stray) + " is not one of its 2 rank files"), std::string::npos)
        << load_error();
    std::filesystem::remove(folder / stray);
  }
  // A rank file that is a symlink loop is said to be one, not a missing rank.
  std::filesystem::remove(folder / "trace.rank1.jsonl");
  std::filesystem::create_symlink("trace.rank1.jsonl", folder / "trace.rank1.jsonl");
  EXPECT_NE(load_error().find("trace.rank1.jsonl: Too many levels of symbolic links"), std::string::npos)
      << load_error();
  std::filesystem::remove_all(folder);
}

TEST(TraceReader, ASecondHeaderOrAHashWithSeparatorsIsRefused) {
  const std::string header = R"({"fabricbench_trace":1,"rank":0,"ranks":1,"clock":"host"})";
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_rank_trace(text, "t");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(header + "\n" + R"({"fabricbench_trace":1,"rank":1,"ranks":5,"clock":"banana"})" + "\n"),
            "t line 2: a second trace header (two traces in one file?)");
  EXPECT_NE(error_of(header + "\n" + R"({"comm":{"hash":"a;c=d","size":1,"rank":0}})" + "\n")
                .find("'hash' is not a communicator hash (1-64 letters, digits and - _ . :)"),
            std::string::npos);
  EXPECT_EQ(error_of(header + "\n" + R"({"comm":{"hash":"7f3a0c11d2e4b509","size":1,"rank":0}})" + "\n"), "");
}

}  // namespace
}  // namespace fabricbench::results
