// SPDX-License-Identifier: Apache-2.0
// The committed trees with planted faults (tests/data/doctor/README.md): derived from the tree
// recorded on the nvidia-h200 machine, a healthy one and four that each differ from it by one
// fault. The doctor must find that fault, and only that one, and fb_health's rules must fail it.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <tuple>

#include "doctor/checks.hpp"
#include "doctor/counter_window.hpp"
#include "doctor/health.hpp"

namespace fabricbench::doctor {
namespace {

const std::string kData = FABRICBENCH_TEST_DATA "/doctor/";

/// The rules an H200/NDR node would be held to, for what these trees carry.
constexpr const char* kRules =
    "min_pcie_width = 16\nmin_pcie_gen = 5\nmin_max_map_count = 262144\nmax_link_errors_per_hour = 1800\n";

NodeReport inspect(const std::string& name) {
  const std::string root = kData + name;
  const SysTree tree(root);
  NodeContext context;
  context.counters = CounterWindowReader(tree, root, 2).finish();
  return inspect_node(tree, {}, "h200", "", context);
}

std::vector<HealthCheck> judge(const std::string& name) {
  const std::string root = kData + name;
  const SysTree tree(root);
  return judge_node(tree, inspect(name), parse_health_rules(kRules, "h200.rules"), {});
}

/// The (check, status, detail) findings of `name` that the healthy tree does not have.
std::vector<Finding> planted(const std::string& name) {
  std::set<std::tuple<std::string, Status, std::string>> healthy;
  for (const Finding& f : inspect("h200-hca").findings) healthy.insert({f.check, f.status, f.detail});
  std::vector<Finding> added;
  for (const Finding& f : inspect(name).findings)
    if (!healthy.contains({f.check, f.status, f.detail})) added.push_back(f);
  return added;
}

/// A copy, so a temporary list of checks may be asked.
std::optional<HealthCheck> failed(const std::vector<HealthCheck>& checks, const std::string& name) {
  for (const HealthCheck& c : checks)
    if (c.name == name && c.status == Status::kFail) return c;
  return std::nullopt;
}

TEST(RecordedTrees, TheHealthyTreePassesEveryNewRule) {
  const std::vector<HealthCheck> checks = judge("h200-hca");
  for (const char* name : {"pcie-width", "pcie-gen", "max-map-count", "link-errors"}) {
    EXPECT_FALSE(failed(checks, name)) << name;
    const auto passed = std::find_if(checks.begin(), checks.end(),
                                     [&](const HealthCheck& c) { return c.name == name && c.status == Status::kPass; });
    EXPECT_NE(passed, checks.end()) << name;
  }
  const NodeReport r = inspect("h200-hca");
  for (const Finding& f : r.findings)
    if (f.check == "pcie-link" || f.check == "link-errors" || f.check == "max-map-count" || f.check == "hca-firmware") {
      EXPECT_TRUE(f.status == Status::kPass || f.status == Status::kInfo) << f.detail;
    }
  ASSERT_EQ(r.topology.devices.size(), 2u);
  EXPECT_EQ(r.topology.cells[0][1], "PHB");  // a VM's flat bus: GPU and HCA meet at the host bridge
}

TEST(RecordedTrees, APlantedX8Gpu) {
  const auto added = planted("h200-hca-gpu-x8");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].status, Status::kWarn);
  EXPECT_EQ(added[0].detail,
            "GPU 0000:00:06.0: x8 at 2.5 GT/s (Gen1), both ends allow x16: trained at half its width, "
            "which cuts what NCCL and GPUDirect RDMA move through it to half");
  const auto width = failed(judge("h200-hca-gpu-x8"), "pcie-width");
  ASSERT_TRUE(width);
  EXPECT_EQ(width->detail, "GPU 0000:00:06.0: x8 (both ends allow x16), below min_pcie_width = 16");
}

TEST(RecordedTrees, APlantedGen3Hca) {
  const auto added = planted("h200-hca-gen3");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].status, Status::kWarn);
  EXPECT_EQ(added[0].detail,
            "mlx5_0 (0000:00:07.0): x16 at 8 GT/s (Gen3), both ends allow 32 GT/s (Gen5): trained at "
            "a lower speed, a quarter of what the link can move");
  const auto gen = failed(judge("h200-hca-gen3"), "pcie-gen");
  ASSERT_TRUE(gen);
  EXPECT_EQ(gen->detail,
            "mlx5_0 (0000:00:07.0): 8 GT/s (Gen3) (both ends allow 32 GT/s (Gen5)), below min_pcie_gen = 5");
}

TEST(RecordedTrees, APlantedRisingErrorCounter) {
  const auto added = planted("h200-hca-errors");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].status, Status::kWarn);
  EXPECT_EQ(added[0].detail,
            "mlx5_0 port 1: symbol_error 0 -> 37, port_rcv_errors 0 -> 4 in 5.0 s (recorded 5 s apart "
            "in ROOT and ROOT.later): 29520 errors/hour");
  const auto errors = failed(judge("h200-hca-errors"), "link-errors");
  ASSERT_TRUE(errors);
  EXPECT_EQ(errors->detail,
            "mlx5_0 port 1: symbol_error 0 -> 37, port_rcv_errors 0 -> 4 in 5.0 s: 29520 errors/hour, "
            "above max_link_errors_per_hour = 1800");
}

TEST(RecordedTrees, APlantedLowMaxMapCount) {
  const auto added = planted("h200-hca-low-map-count");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].status, Status::kWarn);
  EXPECT_EQ(added[0].check, "max-map-count");
  const auto low = failed(judge("h200-hca-low-map-count"), "max-map-count");
  ASSERT_TRUE(low);
  EXPECT_EQ(low->detail, "vm.max_map_count 65530, below 262144");
}

TEST(RecordedTrees, TheOlderRecordingsHaveNoneOfTheNewFilesAndFailClosed) {
  // h200-device predates the link attributes, counters and vm.max_map_count: the rules that ask
  // for them FAIL rather than pass.
  const std::vector<HealthCheck> checks = judge("h200-device");
  EXPECT_TRUE(failed(checks, "pcie-width"));
  EXPECT_TRUE(failed(checks, "max-map-count"));
  EXPECT_TRUE(failed(checks, "link-errors"));
}

}  // namespace
}  // namespace fabricbench::doctor
