// SPDX-License-Identifier: Apache-2.0
// Pure parts of the verbs benchmarks: line-rate arithmetic, names, pattern, option checks.
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "common/error.hpp"
#include "verbs/device.hpp"
#include "verbs/pair_benchmark.hpp"
#include "verbs/verbs_options.hpp"

namespace fabricbench::verbs {
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

TEST(Pattern, DependsOnSenderSizeAndIndex) {
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(1, 64, 0));
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(0, 128, 0));
  EXPECT_NE(pattern_byte(0, 64, 0), pattern_byte(0, 64, 1));
}

std::string usage_error(std::initializer_list<const char*> args, Metric metric = Metric::kBandwidth) {
  std::vector<const char*> argv{"fb_rdma_write_bw"};
  argv.insert(argv.end(), args);
  try {
    parse_verbs_options("fb_rdma_write_bw", metric, static_cast<int>(argv.size()), argv.data(), true);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
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
}

}  // namespace
}  // namespace fabricbench::verbs
