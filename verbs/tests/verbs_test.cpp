// SPDX-License-Identifier: Apache-2.0
// Pure parts of the verbs benchmarks: line-rate arithmetic, names, pattern, option checks.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/measured_row.hpp"
#include "verbs/device.hpp"
#include "verbs/message_memory.hpp"
#include "verbs/pair_benchmark.hpp"
#include "verbs/verbs_options.hpp"

namespace fabricbench::verbs {

// The descriptors these tests parse for (verbs/operations/).
extern const VerbsOperation kRdmaWrite;
extern const VerbsOperation kRdmaAtomic;

namespace {

TEST(LineRate, SpeedTimesWidthAsIbstatReportsIt) {
  EXPECT_DOUBLE_EQ(line_rate_gbps(32, 2), 100);   // EDR 4x
  EXPECT_DOUBLE_EQ(line_rate_gbps(64, 2), 200);   // HDR 4x
  EXPECT_DOUBLE_EQ(line_rate_gbps(128, 2), 400);  // NDR 4x
  EXPECT_DOUBLE_EQ(line_rate_gbps(128, 1), 100);  // NDR 1x
  EXPECT_DOUBLE_EQ(line_rate_gbps(16, 2), 56);    // FDR 4x
  EXPECT_DOUBLE_EQ(line_rate_gbps(3, 2), 0);      // unknown speed code
}

TEST(PortNames, AsIbstat) {
  EXPECT_EQ(port_state_name(IBV_PORT_ACTIVE), "Active");
  EXPECT_EQ(port_state_name(IBV_PORT_DOWN), "Down");
  EXPECT_EQ(phys_state_name(5), "LinkUp");
  EXPECT_EQ(phys_state_name(2), "Polling");
}

TEST(PairRates, BidirectionalCountsBothDirectionsAtTheMeanAndThePeak) {
  // 64 KiB both ways at once: mean 20 us, median 16 us, fastest sample 10 us per message ->
  // 2 x 65536 B / 20e-6 s = 6.5536e9 B/s on average and 1.31072e10 B/s at the peak.
  ResultRow bi;
  bi.time_s.mean = 20e-6;
  bi.time_s.median = 16e-6;
  bi.time_s.min = 10e-6;
  ResultRow uni = bi;
  record_rates(bi, bytes_moved(65536, true, Metric::kBandwidth), 1);
  EXPECT_DOUBLE_EQ(bi.busbw_mean_bytes_per_s, 6.5536e9);
  EXPECT_DOUBLE_EQ(bi.busbw_median_bytes_per_s, 8.192e9);
  EXPECT_DOUBLE_EQ(bi.busbw_peak_bytes_per_s, 1.31072e10);
  record_rates(uni, bytes_moved(65536, false, Metric::kBandwidth), 1);
  EXPECT_DOUBLE_EQ(uni.busbw_peak_bytes_per_s, 6.5536e9);
  // Latency is one way whatever -b says (it refuses -b anyway); no time, no rate.
  EXPECT_DOUBLE_EQ(bytes_moved(2, true, Metric::kLatency), 2);
  ResultRow idle;
  record_rates(idle, 2, 1);
  EXPECT_DOUBLE_EQ(idle.busbw_peak_bytes_per_s, 0);
}

TEST(Pattern, DependsOnSenderSizeAndIndex) {
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(1, 64, 0));
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(0, 128, 0));
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(0, 64, 1));
}

std::string usage_error(std::initializer_list<const char*> args, Metric metric = Metric::kBandwidth,
                        const VerbsOperation& operation = kRdmaWrite) {
  std::vector<const char*> argv{"fb_rdma_write_bw"};
  argv.insert(argv.end(), args);
  try {
    parse_verbs_options("fb_rdma_write_bw", operation, metric, static_cast<int>(argv.size()), argv.data(), true);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

VerbsOptions parsed(std::initializer_list<const char*> args, Metric metric = Metric::kBandwidth,
                    const VerbsOperation& operation = kRdmaWrite) {
  std::vector<const char*> argv{"fb_rdma_write_bw"};
  argv.insert(argv.end(), args);
  return parse_verbs_options("fb_rdma_write_bw", operation, metric, static_cast<int>(argv.size()), argv.data(), true)
      .options;
}

TEST(VerbsOptions, AtomicsAreEightBytesOfPerftestsTwoTypes) {
  EXPECT_EQ(parsed({}, Metric::kLatency, kRdmaAtomic).sweep.max_bytes, 8u);
  EXPECT_EQ(parsed({}, Metric::kBandwidth, kRdmaAtomic).atomic, AtomicKind::kFetchAndAdd);
  EXPECT_EQ(parsed({"-A", "CMP_AND_SWAP"}, Metric::kBandwidth, kRdmaAtomic).atomic, AtomicKind::kCompareAndSwap);
  EXPECT_EQ(parsed({"-A", "faa", "-s", "8"}, Metric::kLatency, kRdmaAtomic).atomic, AtomicKind::kFetchAndAdd);
  EXPECT_NE(usage_error({"-s", "64"}, Metric::kBandwidth, kRdmaAtomic).find("8 B"), std::string::npos);
  EXPECT_NE(usage_error({"-A", "XOR"}, Metric::kBandwidth, kRdmaAtomic).find("-A/--atomic_type"), std::string::npos);
  EXPECT_NE(usage_error({"--use_cuda=0", "--mem", "staged"}, Metric::kBandwidth, kRdmaAtomic).find("staged"),
            std::string::npos);
  EXPECT_NE(usage_error({"-A", "faa"}).find("-A"), std::string::npos);  // write has no -A
  EXPECT_NE(usage_error({"--expect-gbps", "100"}, Metric::kLatency).find("bandwidth gate"), std::string::npos);
  EXPECT_NE(usage_error({"--expect-gbps", "-3"}).find("--expect-gbps"), std::string::npos);
  // Each QP's counter and the slots its fetched value and read-back land in.
  EXPECT_EQ(half_bytes_for(kRdmaAtomic, 8, 4), 64u);
  EXPECT_EQ(half_bytes_for(kRdmaWrite, 65536, 4), 65536u);
}

TEST(VerbsOptions, WarmupZeroTurnsItOffAndIterationsZeroIsRefused) {
  EXPECT_EQ(parsed({"-w", "0"}).warmup, 0);
  EXPECT_EQ(parsed({}).warmup, 128);  // bandwidth: one tx depth
  EXPECT_EQ(parsed({}, Metric::kLatency).warmup, 100);
  EXPECT_EQ(parsed({}, Metric::kLatency).iterations, 1000);
  EXPECT_NE(usage_error({"-n", "0"}).find("--iters: '0' is out of range (must be 1 to"), std::string::npos);
}

TEST(VerbsOptions, PerftestFlagsParseAndConflictsNameTheirFlags) {
  EXPECT_EQ(usage_error({"-d", "mlx5_0", "-i", "1", "-x", "3", "-s", "1M", "-q", "2", "-t", "64", "-b"}), "");
  EXPECT_EQ(usage_error({"-a", "--report_gbits"}), "");
  EXPECT_NE(usage_error({"-s", "1M", "-a"}).find("-s/--size"), std::string::npos);
  EXPECT_NE(usage_error({"-m", "3000"}).find("-m/--mtu"), std::string::npos);
  EXPECT_NE(usage_error({"-n", "10", "-D", "2"}).find("-D/--duration"), std::string::npos);
  EXPECT_NE(usage_error({"-q", "0"}).find("-q/--qp"), std::string::npos);
  EXPECT_NE(usage_error({"--mem", "gpu"}).find("--mem"), std::string::npos);
  EXPECT_NE(usage_error({"--use_cuda_dmabuf"}).find("--use_cuda"), std::string::npos);
  EXPECT_NE(usage_error({"--warn", "95", "--pass", "90"}).find("--warn"), std::string::npos);
  EXPECT_NE(usage_error({"-b"}, Metric::kLatency).find("latency"), std::string::npos);
  EXPECT_NE(usage_error({"--minbytes", "1M", "--maxbytes", "1K"}).find("--minbytes"), std::string::npos);
  EXPECT_NE(usage_error({"--use_cuda=0", "--mem", "host"}).find("different memory"), std::string::npos);
  EXPECT_NE(usage_error({"--use_cuda=0", "--use_cuda_dmabuf", "--mem", "staged"}).find("different memory"),
            std::string::npos);
  EXPECT_NE(usage_error({"--use_cuda=-1"}).find("--use_cuda=-1"), std::string::npos);
}

TEST(VerbsOptions, LoadPatternsOnTheBandwidthTestsOfData) {
  const VerbsOptions incast = parsed({"--pattern", "incast", "--senders", "3"});
  ASSERT_NE(incast.pairs.pattern, nullptr);
  EXPECT_EQ(incast.pairs.pattern->name, "incast");
  EXPECT_EQ(incast.pairs.load.senders, 3);
  EXPECT_EQ(parsed({}).pairs.pattern, nullptr);  // pairs, half by default
  EXPECT_EQ(usage_error({"--pattern", "bisection", "--topology", "tree.conf", "--line-rate", "100"}), "");
  EXPECT_NE(usage_error({"--pattern", "congestion"}).find("fb_sendrecv"), std::string::npos);
  EXPECT_NE(usage_error({"--pattern", "incast", "--pairs", "all"}).find("--pairs and --pattern"), std::string::npos);
  EXPECT_NE(usage_error({"--pattern", "incast", "--use_cuda=0"}).find("host memory"), std::string::npos);
  EXPECT_NE(usage_error({"--pattern", "incast"}, Metric::kLatency).find("--pattern"), std::string::npos);
  EXPECT_NE(usage_error({"--pattern", "incast"}, Metric::kBandwidth, kRdmaAtomic).find("--pattern"), std::string::npos);
  EXPECT_NE(usage_error({"--senders", "2"}).find("needs --pattern"), std::string::npos);
}

TEST(VerbsOptions, MemorySpellingsOfPerftestAndOurs) {
  EXPECT_EQ(parsed({}).memory, MemoryKind::kHost);
  EXPECT_EQ(parsed({"--use_cuda=1"}).memory, MemoryKind::kCuda);
  EXPECT_EQ(parsed({"--use_cuda=1"}).gpu, 1);
  EXPECT_EQ(parsed({"--use_cuda=0", "--use_cuda_dmabuf"}).memory, MemoryKind::kCudaDmabuf);
  EXPECT_EQ(parsed({"--use_cuda=2", "--mem", "staged"}).memory, MemoryKind::kStaged);
  EXPECT_EQ(parsed({"--use_cuda=2", "--mem", "staged"}).gpu, 2);
  EXPECT_EQ(parsed({"--mem", "cuda-dmabuf"}).gpu, -1);  // by local rank
  for (const char* name : {"host", "cuda", "cuda-dmabuf", "staged"})
    EXPECT_STREQ(memory_kind_name(memory_kind(name)), name);
}

TEST(HostMemory, StoresLoadsAndClearsThroughTheWireAddress) {
  auto memory = make_message_memory(MemoryKind::kHost, -1, 0, 8192);
  ASSERT_TRUE(memory->host_visible());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory->wire()) % 4096, 0u);  // page-aligned, as the NIC likes
  const std::vector<std::uint8_t> data{1, 2, 3, 4, 5};
  memory->store(4096, data.data(), data.size());
  EXPECT_EQ(memory->wire()[4096 + 4], 5);
  std::vector<std::uint8_t> back(5);
  memory->load(4096, back.data(), back.size());
  EXPECT_EQ(back, data);
  memory->clear(4097, 2);
  memory->load(4096, back.data(), back.size());
  EXPECT_EQ(back, (std::vector<std::uint8_t>{1, 0, 0, 4, 5}));
}

}  // namespace
}  // namespace fabricbench::verbs
