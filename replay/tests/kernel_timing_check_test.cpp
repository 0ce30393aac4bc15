// SPDX-License-Identifier: Apache-2.0
// The recorder's check of NCCL's kernel timestamps: kernels of one communicator run one after the
// other, so a plan that starts before the previous one ended, or anything after a Send/Recv to the
// rank itself, carries another operation's times. Proven on the real recordings: nothing distrusted
// in the DDP and FSDP traces, everything from the first all_to_all on in the MoE one.
#include "collectives/nccl/kernel_timing_check.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "results/trace_file.hpp"

namespace fabricbench::nccl_trace {
namespace {

constexpr std::uint64_t kA = 0xa, kB = 0xb;

KernelTiming timed(std::uint64_t comm, double start_us, double duration_us, std::int64_t plan = -1) {
  return {comm, plan, false, true, start_us * 1e3, duration_us * 1e3};
}

std::vector<bool> distrusted(const std::vector<KernelTiming>& ops) { return check_kernel_timings(ops).distrusted; }

TEST(KernelTimingCheck, KernelsOneAfterTheOtherAreTrustedAndOtherCommunicatorsMayOverlap) {
  const TimingVerdict v = check_kernel_timings({timed(kA, 0, 100), timed(kB, 50, 100), timed(kA, 100.5, 10),
                                                timed(kA, 200, 10, 7), timed(kA, 200, 10, 7), timed(kA, 300, 5)});
  EXPECT_EQ(v.distrusted, std::vector<bool>(6, false));
  EXPECT_TRUE(v.reason.empty());
}

TEST(KernelTimingCheck, ASendToItselfDistrustsItsPlanAndEverythingAfterOnThatCommunicator) {
  KernelTiming self{kA, 5, true, false, 0, 0};
  const std::vector<KernelTiming> ops = {timed(kA, 0, 100),     timed(kA, 150, 40, 5), self,
                                         timed(kA, 150, 40, 5), timed(kB, 160, 10),    timed(kA, 300, 10)};
  const TimingVerdict v = check_kernel_timings(ops);
  EXPECT_EQ(v.distrusted, (std::vector<bool>{false, true, true, true, false, true}));
  EXPECT_NE(v.reason.find("to the rank itself"), std::string::npos);
  EXPECT_NE(v.reason.find("000000000000000a"), std::string::npos);
}

TEST(KernelTimingCheck, APlanStartingBeforeThePreviousEndedDistrustsBothAndWhatFollows) {
  EXPECT_EQ(distrusted({timed(kA, 0, 100), timed(kA, 10, 100, 3), timed(kA, 10, 100, 3), timed(kA, 500, 10),
                        timed(kB, 20, 5)}),
            (std::vector<bool>{true, true, true, true, false}));
  // Two plans with one start (the same slot read twice), with or without an untimed plan between.
  EXPECT_EQ(distrusted({timed(kA, 0, 30), KernelTiming{kA, -1, false, false, 0, 0}, timed(kA, 0, 30)}),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(distrusted({timed(kA, 0, 30), timed(kA, 0, 30)}), (std::vector<bool>{true, true}));
}

TEST(KernelTimingCheck, ACommunicatorShiftedBeforeTheRingsFirstOperationIsDistrustedThroughout) {
  const TimingVerdict v = check_kernel_timings({timed(kA, 0, 10), timed(kB, 5, 10), timed(kA, 20, 10)}, {kA});
  EXPECT_EQ(v.distrusted, (std::vector<bool>{true, false, true}));
  EXPECT_NE(v.reason.find("before the operations kept"), std::string::npos);
}

// The check over a real trace read back: each operation as the recorder held it.
TimingVerdict check_recording(const std::string& name, int rank) {
  const std::vector<results::RankTrace> traces =
      results::load_trace(std::string(FABRICBENCH_TEST_DATA) + "/replay/" + name);
  const results::RankTrace& trace = traces.at(static_cast<std::size_t>(rank));
  std::vector<KernelTiming> ops;
  for (const results::TraceOperation& op : trace.operations) {
    const results::TraceCommunicator* comm = trace.communicator(op.comm);
    ops.push_back({std::stoull(op.comm, nullptr, 16), op.group, op.point_to_point() && op.peer == comm->rank,
                   op.duration_us > 0, op.start_us * 1e3, op.duration_us * 1e3});
  }
  return check_kernel_timings(ops);
}

TEST(KernelTimingCheck, TheH200DdpAndFsdpRecordingsAreTrustedThroughout) {
  for (const char* name : {"h200-ddp", "h200-fsdp"})
    for (int rank = 0; rank < 2; ++rank) {
      const TimingVerdict v = check_recording(name, rank);
      EXPECT_EQ(v.distrusted, std::vector<bool>(v.distrusted.size(), false)) << name << " rank " << rank;
    }
}

TEST(KernelTimingCheck, TheH200MoeRecordingIsDistrustedFromItsFirstAllToAll) {
  // Operations 0-4: an AllGather and four Broadcasts; 5-8 the first all_to_all_single's group
  // (a Send and a Recv to the rank itself, then to its peer): its 6 MiB over NET/Socket recorded
  // as 32 us, and every later time shifted.
  for (int rank = 0; rank < 2; ++rank) {
    const TimingVerdict v = check_recording("h200-moe", rank);
    ASSERT_EQ(v.distrusted.size(), 40U);
    for (std::size_t i = 0; i < v.distrusted.size(); ++i) EXPECT_EQ(v.distrusted[i], i >= 5) << "operation " << i;
  }
}

}  // namespace
}  // namespace fabricbench::nccl_trace
