// SPDX-License-Identifier: Apache-2.0
// The profiler plugin's recorder, fed the events NCCL sends (an operation's enqueue, its kernel
// channels' GPU timestamps in any order against it): what it writes must read back through the
// trace reader, in issue order, with GPU durations, gaps and inferred steps; its ring and its
// step window bound what is kept; bad settings name the variable.
#include "collectives/nccl/trace_recorder.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "results/trace_file.hpp"

namespace fabricbench::nccl_trace {
namespace {

// A folder of the temporary directory, empty at the start and removed at the end.
struct ScratchFolder {
  explicit ScratchFolder(const char* name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
  }
  ~ScratchFolder() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// A recorder's settings that write into `folder`.
RecorderSettings writing_to(const ScratchFolder& folder) {
  RecorderSettings s;
  s.folder = folder.path.string();
  return s;
}

struct Recorded {
  TraceRecorder recorder;
  const Communicator* world;

  explicit Recorded(RecorderSettings s = {}) : recorder(with_world(std::move(s))) {
    world = recorder.add_communicator(0x7f3a0c11d2e4b509ULL, 2, 0, 2);
  }
  static RecorderSettings with_world(RecorderSettings s) {
    s.world_rank = 0;
    s.world_size = 2;
    s.host = "node0";
    return s;
  }

  // One operation: enqueued, then its kernel's two channels from `start_ns` for `duration_ns`.
  void run(const std::string& function, std::uint64_t count, std::uint64_t start_ns, std::uint64_t duration_ns) {
    PendingOperation* op =
        recorder.begin_operation({world, function, count, "ncclFloat32", -1, -1, "RING", "SIMPLE", 2}, 0);
    recorder.operation_enqueued(op);
    for (int ch = 0; ch < 2; ++ch) {
      KernelChannelEvent* channel = recorder.kernel_started(op, start_ns + static_cast<std::uint64_t>(ch) * 10);
      recorder.kernel_stopped(channel, start_ns + duration_ns - static_cast<std::uint64_t>(ch) * 10);
      recorder.kernel_closed(channel);
    }
  }

  results::RankTrace read_back() { return results::parse_rank_trace(recorder.trace_text(), "recorded"); }
};

TEST(TraceRecorder, WritesWhatTheReaderTakesWithGpuDurationsAndGaps) {
  Recorded r;
  r.run("AllReduce", 1024, 1'000'000, 50'000);
  r.run("AllGather", 256, 1'080'000, 20'000);
  const results::RankTrace trace = r.read_back();
  EXPECT_EQ(trace.clock, "gpu");
  EXPECT_EQ(trace.host, "node0");
  ASSERT_EQ(trace.communicators.size(), 1U);
  EXPECT_EQ(trace.communicators[0].hash, "7f3a0c11d2e4b509");
  ASSERT_EQ(trace.operations.size(), 2U);
  EXPECT_EQ(trace.operations[0].function, "AllReduce");
  EXPECT_EQ(trace.operations[0].dtype, DataType::kFloat32);
  EXPECT_EQ(trace.operations[0].algorithm, "RING");
  EXPECT_DOUBLE_EQ(trace.operations[0].duration_us, 50.0);
  EXPECT_DOUBLE_EQ(trace.operations[1].start_us, 80.0);
  EXPECT_DOUBLE_EQ(trace.operations[1].gap_us, 30.0);  // 1.08 ms - (1.0 ms + 50 us)
  EXPECT_EQ(trace.operations[0].reduction, "unknown");
}

TEST(TraceRecorder, KeepsIssueOrderWhenALaterOperationEndsFirst) {
  Recorded r;
  PendingOperation* first =
      r.recorder.begin_operation({r.world, "AllReduce", 8, "ncclFloat32", -1, -1, "RING", "LL", 1}, 0);
  PendingOperation* second =
      r.recorder.begin_operation({r.world, "Broadcast", 4, "ncclInt32", 0, -1, "RING", "LL", 1}, 0);
  r.recorder.operation_enqueued(first);
  r.recorder.operation_enqueued(second);
  KernelChannelEvent* b = r.recorder.kernel_started(second, 500);
  r.recorder.kernel_stopped(b, 600);
  r.recorder.kernel_closed(b);
  EXPECT_EQ(r.recorder.finished_operations(), 0U);  // the first has not ended yet
  KernelChannelEvent* a = r.recorder.kernel_started(first, 100);
  r.recorder.kernel_stopped(a, 300);
  r.recorder.kernel_closed(a);
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 2U);
  EXPECT_EQ(trace.operations[0].function, "AllReduce");
  EXPECT_EQ(trace.operations[1].function, "Broadcast");
  EXPECT_EQ(trace.operations[1].root, 0);
  EXPECT_EQ(trace.operations[1].dtype, DataType::kInt32);
}

TEST(TraceRecorder, TheRingKeepsTheLastOperationsAndSaysHowManyWentMissing) {
  RecorderSettings s;
  s.max_operations = 3;
  Recorded r(s);
  for (int i = 0; i < 5; ++i) r.run("AllReduce", 100 + static_cast<std::uint64_t>(i), 1'000'000ULL * i, 1000);
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 3U);
  EXPECT_EQ(trace.operations[0].count, 102U);
  EXPECT_EQ(r.recorder.dropped_operations(), 2U);
  EXPECT_NE(r.recorder.trace_text().find("\"dropped\": 2"), std::string::npos);
}

TEST(TraceRecorder, PointToPointCallsKeepTheirPeer) {
  Recorded r;
  PendingOperation* send = r.recorder.begin_operation({r.world, "Send", 64, "ncclInt8", -1, 1, "", "", 1}, 0);
  r.recorder.operation_enqueued(send);
  KernelChannelEvent* ch = r.recorder.kernel_started(send, 10);
  r.recorder.kernel_stopped(ch, 20);
  r.recorder.kernel_closed(ch);
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 1U);
  EXPECT_EQ(trace.operations[0].peer, 1);
  EXPECT_TRUE(trace.operations[0].point_to_point());
}

// NCCL's Group event is the parent of the Send/Recv issued in one group: its handle carries the
// group's number, written as op.group and read back as one issue.
TEST(TraceRecorder, SendRecvOfOneNcclGroupShareItsNumber) {
  EXPECT_EQ(group_number(group_handle(0)), 0);
  EXPECT_EQ(group_number(group_handle(41)), 41);
  EXPECT_EQ(group_number(nullptr), -1);
  Recorded r;
  const PendingOperation* op = r.recorder.begin_operation({r.world, "AllReduce", 8, "ncclFloat32", -1, -1, "", ""}, 0);
  EXPECT_EQ(group_number(op), -1);  // an operation's handle is never taken for a group's
  r.recorder.operation_enqueued(const_cast<PendingOperation*>(op));
  for (const auto& [function, group] : std::vector<std::pair<std::string, void*>>{
           {"Send", group_handle(7)}, {"Recv", group_handle(7)}, {"Send", group_handle(8)}}) {
    PendingOperation* p2p =
        r.recorder.begin_operation({r.world, function, 64, "ncclInt8", -1, 1, "", "", 1, group_number(group)}, 0);
    r.recorder.operation_enqueued(p2p);
  }
  r.recorder.write();  // untimed: no kernel events came
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 4U);
  EXPECT_EQ(trace.operations[0].group, -1);
  EXPECT_EQ(trace.operations[1].group, 7);
  EXPECT_EQ(trace.operations[2].group, 7);
  EXPECT_EQ(trace.operations[3].group, 8);
  const std::vector<results::TraceIssue> issues = results::issues_of(trace);
  ASSERT_EQ(issues.size(), 3U);  // the all_reduce, the group of two, the lone Send
  EXPECT_EQ(issues[1].size, 2U);
}

// A DDP-like job: per step a small bucket then four large ones, the long pause before the first.
std::vector<std::uint64_t> steps_of_ddp(int steps, std::vector<double>& gaps) {
  std::vector<std::uint64_t> signatures = {99};  // a setup call before the first step
  gaps = {0};
  for (int s = 0; s < steps; ++s) {
    signatures.push_back(1);
    gaps.push_back(5000);
    for (int b = 0; b < 4; ++b) {
      signatures.push_back(2);
      gaps.push_back(200);
    }
  }
  return signatures;
}

TEST(InferSteps, FindsTheRepeatingPatternAndPhasesItAtTheLongPause) {
  std::vector<double> gaps;
  const std::vector<std::uint64_t> signatures = steps_of_ddp(4, gaps);
  const std::vector<std::int64_t> steps = infer_steps(signatures, gaps);
  ASSERT_EQ(steps.size(), 21U);
  EXPECT_EQ(steps[0], 0);  // setup
  EXPECT_EQ(steps[1], 1);  // the small bucket starts step 1
  EXPECT_EQ(steps[5], 1);
  EXPECT_EQ(steps[6], 2);
  EXPECT_EQ(steps[20], 4);
}

TEST(InferSteps, AStepOfIdenticalCallsIsFoundByItsPause) {
  std::vector<std::uint64_t> signatures(24, 7);
  std::vector<double> gaps(24, 100);
  for (std::size_t i = 0; i < gaps.size(); i += 6) gaps[i] = 4000;  // six identical calls a step
  const std::vector<std::int64_t> steps = infer_steps(signatures, gaps);
  EXPECT_EQ(steps[0], 1);
  EXPECT_EQ(steps[5], 1);
  EXPECT_EQ(steps[6], 2);
  EXPECT_EQ(steps[23], 4);
}

TEST(InferSteps, AFewCallsAfterTheLastStepDoNotHideTheSteps) {
  std::vector<double> gaps;
  std::vector<std::uint64_t> signatures = steps_of_ddp(4, gaps);
  signatures.push_back(42);  // a final barrier
  gaps.push_back(9000);
  const std::vector<std::int64_t> steps = infer_steps(signatures, gaps);
  EXPECT_EQ(steps[1], 1);
  EXPECT_EQ(steps[6], 2);
  EXPECT_EQ(steps[20], 4);
}

TEST(InferSteps, NothingRepeatsThreeTimesMeansUnknown) {
  const std::vector<std::int64_t> steps = infer_steps({1, 2, 3, 1, 2, 3}, std::vector<double>(6, 1.0));
  for (const std::int64_t s : steps) EXPECT_EQ(s, -1);
  EXPECT_TRUE(infer_steps({}, {}).empty());
}

TEST(TraceRecorder, TheStepWindowWritesOnlyTheStepsAskedFor) {
  RecorderSettings s;
  s.first_step = 2;
  s.step_count = 2;
  Recorded r(s);
  std::uint64_t t = 0;
  for (int step = 0; step < 5; ++step) {
    t += 5'000'000;  // the long pause before each step's first call
    r.run("AllReduce", 10, t, 1000);
    t += 1000 + 100'000;
    r.run("AllReduce", 20, t, 1000);
    t += 1000;
  }
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 4U);
  EXPECT_EQ(trace.operations[0].step, 2);
  EXPECT_EQ(trace.operations[0].count, 10U);
  EXPECT_EQ(trace.operations[3].step, 3);
  EXPECT_DOUBLE_EQ(trace.operations[0].start_us, 0.0);
}

TEST(TraceRecorder, AnOperationWhoseKernelEventsNeverCameIsWrittenUntimedAndHoldsNothingBack) {
  const ScratchFolder scratch("fb-recorder-untimed-test");
  Recorded r(writing_to(scratch));
  PendingOperation* stuck = r.recorder.begin_operation({r.world, "AllReduce", 8, "ncclFloat32", -1, -1, "", "", 2}, 0);
  r.recorder.operation_enqueued(stuck);
  r.run("AllGather", 16, 1000, 500);
  EXPECT_EQ(r.recorder.finished_operations(), 0U);  // held back behind the first
  r.recorder.write();
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 2U);
  EXPECT_EQ(trace.operations[0].function, "AllReduce");
  EXPECT_DOUBLE_EQ(trace.operations[0].duration_us, 0.0);
  EXPECT_DOUBLE_EQ(trace.operations[1].duration_us, 0.5);
  EXPECT_NE(r.recorder.trace_text().find("\"timed\": false"), std::string::npos);
}

// NCCL's kernel timestamps shift after a Send/Recv to the rank itself (kernel_timing_check.hpp):
// what follows on that communicator is written untimed, the header says why, the reader keeps it.
TEST(TraceRecorder, TimesThatAreAnotherOperationsAreWrittenUntimed) {
  Recorded r;
  r.run("AllReduce", 1024, 1'000'000, 50'000);
  for (const int peer : {0, 1}) {  // one all_to_all: to itself (no kernel events), then to its peer
    PendingOperation* send =
        r.recorder.begin_operation({r.world, "Send", 64, "ncclFloat32", -1, peer, "", "", 1, 9}, 2'000'000);
    r.recorder.operation_enqueued(send);
    if (peer == 0) continue;
    KernelChannelEvent* ch = r.recorder.kernel_started(send, 1'100'000);
    r.recorder.kernel_stopped(ch, 1'100'032);
    r.recorder.kernel_closed(ch);
  }
  r.run("AllReduce", 1024, 1'200'000, 50'000);
  r.recorder.write();
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 4U);
  EXPECT_TRUE(trace.operations[0].timed);
  EXPECT_DOUBLE_EQ(trace.operations[0].duration_us, 50.0);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(trace.operations[i].timed) << "operation " << i;
    EXPECT_DOUBLE_EQ(trace.operations[i].duration_us, 0.0);
  }
  EXPECT_EQ(trace.clock, "gpu");
  EXPECT_NE(r.recorder.trace_text().find("\"kernel_timing\": \"NCCL's kernel timestamps shift after a Send/Recv to "
                                         "the rank itself"),
            std::string::npos);
  // Written back by the trace writer (fb_import's), "timed": false survives.
  EXPECT_FALSE(results::parse_rank_trace(results::trace_text(trace), "again").operations[2].timed);
}

TEST(TraceRecorder, AShiftStaysWhenTheRingLetsItsCauseGo) {
  RecorderSettings s;
  s.max_operations = 2;
  Recorded r(s);
  PendingOperation* self = r.recorder.begin_operation({r.world, "Send", 64, "ncclFloat32", -1, 0, "", "", 1, 3}, 0);
  r.recorder.operation_enqueued(self);
  r.recorder.write();  // the Send to itself, untimed (no kernel events)
  r.run("AllReduce", 1024, 1'000'000, 50'000);
  r.run("AllReduce", 1024, 2'000'000, 50'000);  // the ring (2) lets the Send go
  const results::RankTrace trace = r.read_back();
  ASSERT_EQ(trace.operations.size(), 2U);
  EXPECT_FALSE(trace.operations[0].timed);
  EXPECT_FALSE(trace.operations[1].timed);
}

TEST(TraceRecorder, WritesOneFilePerRankIntoTheFolder) {
  const ScratchFolder scratch("fb-recorder-test");
  const std::filesystem::path& folder = scratch.path;
  Recorded r(writing_to(scratch));
  r.run("AllReduce", 1024, 0, 1000);
  EXPECT_EQ(r.recorder.write(), (folder / "trace.rank0.jsonl").string());
  EXPECT_EQ(r.recorder.write(), "");  // nothing new since
  EXPECT_TRUE(std::filesystem::is_regular_file(folder / "trace.rank0.jsonl"));
}

TEST(RecorderSettings, FromTheEnvironmentAndBadValuesNamed) {
  ::unsetenv("FABRICBENCH_TRACE_DIR");
  EXPECT_FALSE(settings_from_environment().has_value());
  ::setenv("FABRICBENCH_TRACE_DIR", "/tmp/t", 1);
  ::setenv("FABRICBENCH_TRACE_STEPS", "10:5", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  const auto s = settings_from_environment();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->first_step, 10);
  EXPECT_EQ(s->step_count, 5);
  if (!::getenv("RANK")) {
    EXPECT_EQ(s->world_rank, 3);
    EXPECT_EQ(s->world_size, 8);
  }
  ::setenv("FABRICBENCH_TRACE_STEPS", "10", 1);
  EXPECT_THROW(settings_from_environment(), std::invalid_argument);
  ::setenv("FABRICBENCH_TRACE_STEPS", "10:5", 1);
  ::setenv("FABRICBENCH_TRACE_MAX_OPS", "0", 1);
  try {
    settings_from_environment();
    ADD_FAILURE() << "0 operations accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("FABRICBENCH_TRACE_MAX_OPS"), std::string::npos);
  }
  for (const char* name : {"FABRICBENCH_TRACE_DIR", "FABRICBENCH_TRACE_STEPS", "FABRICBENCH_TRACE_MAX_OPS",
                           "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"})
    ::unsetenv(name);
}

TEST(TraceTypeName, NcclNamesBecomeTheTraceNames) {
  EXPECT_EQ(trace_type_name("ncclBfloat16"), "bfloat16");
  EXPECT_EQ(trace_type_name("ncclFloat16"), "half");
  EXPECT_EQ(trace_type_name("ncclFloat8e4m3"), "f8e4m3");
  EXPECT_EQ(trace_type_name("something"), "something");
}

}  // namespace
}  // namespace fabricbench::nccl_trace
